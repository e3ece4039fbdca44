/**
 * V8 flags on node's command line (`process.execArgv`). Where Mirador sets a
 * V8 flag of its own (the serving process's heap growth, the import process's
 * first old generation), an operator's value on the command line wins.
 */

/**
 * Whether `execArgv` sets the V8 flag `name` (written `--words-with-dashes`):
 * V8 takes `-` or `_` between words, and the value after `=` or as the next
 * argument.
 */
export function v8FlagGiven(execArgv: readonly string[], name: string): boolean {
  const words = name.replace(/^--/, '').split('-').join('[-_]');
  const given = new RegExp(`^--${words}(=|$)`);
  return execArgv.some((a) => given.test(a));
}
