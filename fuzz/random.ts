/**
 * A seeded random source for the fuzzer: the same seed gives the same cases on every machine, so a failure seen in
 * CI is replayed with `npm run fuzz -- --seed S --cases N`.
 * The generator is sfc32 (small fast counter), seeded through splitmix32 so that nearby seeds give unrelated streams.
 */

/** A deterministic stream of random numbers and the few shapes of choice the case generators need. */
export class SeededRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** seed: any integer (only its low 32 bits count). */
  constructor(seed: number) {
    let s = seed >>> 0;
    const splitmix = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = splitmix();
    this.b = splitmix();
    this.c = splitmix();
    this.d = splitmix();
    for (let i = 0; i < 12; i++) this.uint32();
  }

  /** A uniform integer in [0, 2^32). */
  uint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** A uniform float in [0, 1). */
  float(): number {
    return this.uint32() / 4294967296;
  }

  /** A uniform integer in [0, n) (n ≥ 1). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** A uniform integer in [lo, hi] (both included). */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.float() < p;
  }

  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** One element of [item, weight] pairs, chosen in proportion to the weights (> 0). */
  weighted<T>(entries: ReadonlyArray<readonly [T, number]>): T {
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let r = this.float() * total;
    for (const [item, w] of entries) {
      r -= w;
      if (r < 0) return item;
    }
    return entries[entries.length - 1][0];
  }

  /** n random bytes. */
  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) out[i] = this.uint32() & 0xff;
    return out;
  }

  /** A new independent stream derived from this one (for a sub-generator that must not shift the main sequence). */
  fork(): SeededRandom {
    return new SeededRandom(this.uint32());
  }
}
