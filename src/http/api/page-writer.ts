/**
 * Writes a page's entries (items, trimmed items, tombstones) as the pieces
 * of its body, joined by commas: subset-page.ts and thin-page.ts write with it.
 */
const COMMA = 0x2c;
const EMPTY = Buffer.alloc(0);

/**
 * Runs of several items at least this long go out as views of their chunk or
 * projection; shorter ones are copied. A view costs a `res.write` through
 * Node's stream machinery and an iovec; a copy, its bytes and the blocks it
 * fills (fresh memory the collector must reclaim). A thin page's runs (~18
 * items, ~1.8 KB) copied ran at 2,300-2,900 req/s against 5,200-6,400 as views.
 */
export const VIEW_RUN_FROM_BYTES = 512;
/**
 * A single item (a scattered match) goes out as a view only from this long:
 * a page of them is as many pieces as items. 1,000 `estado` notices (~1.7 KB
 * each, from ~550 chunks) as ~1,000 views ran at 471-537 req/s, copied into
 * ~14 blocks at 666-959 (jemalloc; 566-642 against 698-886 on glibc); 100 of
 * them 4,181-4,398 against 4,693-4,842; 100 scattered customers (~3.6 KB)
 * about the same either way.
 */
export const VIEW_ITEM_FROM_BYTES = 16 * 1024;
/** A page's first copy buffer; each next one is twice as large, up to the last (below malloc's mmap threshold). */
const FIRST_BLOCK_BYTES = 16 * 1024;
const LAST_BLOCK_BYTES = 128 * 1024;
/** Pieces shorter than this are copied byte by byte: cheaper than Buffer#copy's set-up. */
const LOOP_COPY_BYTES = 64;

/**
 * Writes a page's entries as pieces: runs of items long enough as
 * views of their chunks (taking along the comma before them when the chunk
 * has it, so a scattered page is not twice as many pieces), smaller ones and
 * commas copied into a few buffers, allocated when first needed.
 */
export class PageWriter {
  readonly pieces: Buffer[] = [];
  private buf = EMPTY;
  private start = 0;
  private len = 0;
  private first = true;
  private next = FIRST_BLOCK_BYTES;

  separator() {
    if (!this.first) this.byte(COMMA);
    this.first = false;
  }

  byte(b: number) {
    if (this.len === this.buf.length) this.grow(1);
    this.buf[this.len++] = b;
  }

  copy(src: Buffer, from: number, to: number) {
    const n = to - from;
    if (this.len + n > this.buf.length) this.grow(n);
    if (n < LOOP_COPY_BYTES) {
      const buf = this.buf;
      let at = this.len;
      for (let i = from; i < to; i++) buf[at++] = src[i]!;
    } else src.copy(this.buf, this.len, from, to);
    this.len += n;
  }

  /**
   * An entry of bytes `from..to` of `src`, after a comma unless it is the
   * first: a view when at least `viewFrom` bytes long (VIEW_RUN_FROM_BYTES or
   * VIEW_ITEM_FROM_BYTES), else a copy. `commaBefore`: `src[from - 1]` is
   * the comma, so the view takes it along instead of a piece of its own.
   */
  entry(src: Buffer, from: number, to: number, commaBefore: boolean, viewFrom: number) {
    if (to - from < viewFrom) {
      this.separator();
      return this.copy(src, from, to);
    }
    if (this.first || !commaBefore) this.separator();
    else from--;
    this.first = false;
    this.flushCopies();
    this.pieces.push(src.subarray(from, to));
  }

  finish(): Buffer[] {
    this.flushCopies();
    return this.pieces;
  }

  private flushCopies() {
    if (this.len > this.start) this.pieces.push(this.buf.subarray(this.start, this.len));
    this.start = this.len;
  }

  private grow(n: number) {
    this.flushCopies();
    this.buf = Buffer.allocUnsafeSlow(Math.max(this.next, n));
    this.next = Math.min(this.next * 2, LAST_BLOCK_BYTES);
    this.start = 0;
    this.len = 0;
  }
}

