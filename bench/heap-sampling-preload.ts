/**
 * Loaded into a server by bench/promoted-bytes.ts (`node --import
 * …/heap-sampling-preload.js`). The first SIGUSR2 starts node's GCProfiler
 * (every collection, with each heap space's size before and after it); the
 * next one stops it and writes `{ gcs, profile }` to HEAP_SAMPLING_OUT.
 *
 * With HEAP_SAMPLING_SITES=1 V8's sampling heap profiler runs as well,
 * keeping only what outlives the young generation
 * (`includeObjectsCollectedByMinorGC: false`): where such bytes are
 * allocated. Its handles on what it samples can keep those objects alive
 * through young collections (some runs promoted 40 times more with it than
 * without), so it names sites and its totals are not the measure.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { GCProfiler } from 'node:v8';

const out = process.env.HEAP_SAMPLING_OUT;
if (!out) throw new Error('heap-sampling-preload: HEAP_SAMPLING_OUT names the file to write');
const session = process.env.HEAP_SAMPLING_SITES === '1' ? new Session() : null;
session?.connect();

let profiler: GCProfiler | null = null;

process.on('SIGUSR2', () => {
  void (async () => {
    if (!profiler) {
      profiler = new GCProfiler();
      profiler.start();
      if (session) {
        await session.post('HeapProfiler.enable');
        await session.post('HeapProfiler.startSampling', {
          samplingInterval: 512,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: false,
        });
      }
      return;
    }
    // Sampling stops first, so that it does not count what the GCProfiler's report allocates.
    const profile = session ? (await session.post('HeapProfiler.stopSampling')).profile : null;
    const gcs = profiler.stop();
    profiler = null;
    writeFileSync(out, JSON.stringify({ gcs, profile }));
  })();
});
