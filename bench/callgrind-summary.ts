/**
 * Totals of callgrind output files (one per thread, `--separate-threads=yes`):
 * instructions on the main thread and on all, and the main thread's costliest
 * functions by their own instructions. JIT code appears to callgrind as bare
 * addresses; node's `--perf-basic-prof` map (`start size name` per line)
 * names them.
 */

export interface CallgrindSummary {
  mainThread: number;
  allThreads: number;
  /** [function, instructions of its own], costliest first (main thread). */
  topFunctions: [string, number][];
}

interface Symbol {
  start: number;
  end: number;
  name: string;
}

function parseMap(text: string): Symbol[] {
  const symbols: Symbol[] = [];
  for (const line of text.split('\n')) {
    const [start, size, ...name] = line.split(' ');
    if (!start || !size || name.length === 0) continue;
    const s = parseInt(start, 16);
    symbols.push({ start: s, end: s + parseInt(size, 16), name: name.join(' ') });
  }
  return symbols.sort((a, b) => a.start - b.start);
}

function lookup(symbols: Symbol[], address: number): string | null {
  let lo = 0;
  let hi = symbols.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = symbols[mid]!;
    if (address < s.start) hi = mid - 1;
    else if (address >= s.end) lo = mid + 1;
    else return s.name;
  }
  return null;
}

/** The `summary:` line of one file: its total instructions. */
function total(text: string): number {
  const m = /^summary: (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}

/** Instructions of each function's own code in one file (calls' inclusive costs excluded). */
function selfCosts(text: string): Map<string, number> {
  const names = new Map<string, string>();
  const costs = new Map<string, number>();
  // `fn=(id) name` defines an id; `fn=(id)` reuses it (name compression).
  const named = (spec: string): string => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(spec);
    if (!m) return spec;
    if (m[2] !== undefined) names.set(m[1]!, m[2]);
    return names.get(m[1]!) ?? spec;
  };
  let current = '?';
  let callLine = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) {
      current = named(line.slice(3));
      callLine = false;
    } else if (line.startsWith('cfn=')) named(line.slice(4));
    else if (line.startsWith('calls=')) callLine = true;
    else if (/^[0-9+\-*]/.test(line)) {
      // The line after `calls=` is the call's inclusive cost, not the caller's own.
      if (callLine) {
        callLine = false;
        continue;
      }
      const cost = Number(line.split(' ')[1]);
      if (Number.isFinite(cost)) costs.set(current, (costs.get(current) ?? 0) + cost);
    }
  }
  return costs;
}

/** `files`: the threads' files, the main thread's first. */
export function summarizeCallgrind(files: string[], perfMap: string): CallgrindSummary {
  const symbols = parseMap(perfMap);
  const byName = new Map<string, number>();
  for (const [fn, cost] of selfCosts(files[0] ?? '')) {
    const address = /^0x([0-9a-f]+)$/.exec(fn);
    const name = (address && lookup(symbols, parseInt(address[1]!, 16))) || fn;
    byName.set(name, (byName.get(name) ?? 0) + cost);
  }
  return {
    mainThread: total(files[0] ?? ''),
    allThreads: files.reduce((sum, f) => sum + total(f), 0),
    topFunctions: [...byName].sort((a, b) => b[1] - a[1]),
  };
}
