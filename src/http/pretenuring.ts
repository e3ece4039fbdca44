/**
 * A serving process's V8 does not pretenure: it allocates every object in
 * the young generation, whatever the allocation site's past.
 *
 * Why: V8 watches how many of an allocation site's objects survive a young
 * collection, and from 85% on allocates that site's objects in the old
 * generation directly from then on. In about half of the launches some site
 * of the request path crossed that line before the process was warm. From
 * then on, most likely, each request left an object in the old generation
 * whose references kept the rest of the request alive through the next young
 * collection, which then promoted it:
 * ~2,250 bytes a warm detail went to the old generation instead of ~13,
 * with three to five full collections in 10 s instead of one or two. Which
 * launch falls into it is chance: 7 of 17 did here, and 0 of 15 without
 * pretenuring (docs/performance.md, "Garbage in the old generation").
 *
 * What is lost: an object that does live long (a cache's slot, a chunk's
 * wrapper) is copied once more, by a young collection, before it is promoted.
 * On PostgreSQL that cost the largest company's mix of the tenants bench ~20%
 * of its requests a second (for ~30 MB less RSS at 512 MB): the better mend,
 * not yet found, is the site that falls into the trap. The import process is
 * another process and keeps V8's default.
 */
import { setFlagsFromString } from 'node:v8';
import { v8FlagGiven } from '../v8-flags.js';

const ON = '--allocation-site-pretenuring';
const OFF = '--no-allocation-site-pretenuring';

/** Whether a serving process turns pretenuring off: yes, unless node's command line says either way (`execArgv`). */
export function turnsPretenuringOff(execArgv: readonly string[] = process.execArgv): boolean {
  return !v8FlagGiven(execArgv, ON) && !v8FlagGiven(execArgv, OFF);
}

/** Turns this process's pretenuring off, as `turnsPretenuringOff` says; whether it did. */
export function applyNoPretenuring(): boolean {
  if (!turnsPretenuringOff()) return false;
  setFlagsFromString(OFF);
  return true;
}
