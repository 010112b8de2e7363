/**
 * A text file written as bytes, number by number: the OBJ writer's 50k-vertex output is 150k lines and half a million
 * numbers, and a string per number and per line (then joined) cost most of its time. UTF-8 throughout: text with
 * non-ASCII characters (a part's name) is encoded as it is written.
 */
export class AsciiWriter {
  private bytes = new Uint8Array(1 << 16);
  private length = 0;
  private readonly encoder = new TextEncoder();

  /** Appends text (any Unicode, written as UTF-8). */
  text(s: string): void {
    // a UTF-8 character takes at most 3 bytes per UTF-16 unit
    this.room(3 * s.length);
    this.length += this.encoder.encodeInto(s, this.bytes.subarray(this.length)).written;
  }

  /** Appends bytes [from, to) of `source` as they are (a line copied from another file). */
  bytesFrom(source: Uint8Array, from: number, to: number): void {
    this.room(to - from);
    this.bytes.set(source.subarray(from, to), this.length);
    this.length += to - from;
  }

  /** Appends one byte: an ASCII character's code (32 space, 10 newline, 47 slash, …). */
  byte(code: number): void {
    this.room(1);
    this.bytes[this.length++] = code;
  }

  /** Appends a whole number in decimal (a safe integer: |n| < 2^53), as String(n) writes it. */
  integer(n: number): void {
    this.room(17);
    if (n < 0) {
      this.bytes[this.length++] = 45; // -
      n = -n;
    }
    this.digits(n, 0);
  }

  /**
   * Appends x rounded to `decimals` places (0 to 6), written as String(Math.round(x·10^d) / 10^d) writes it: no
   * trailing zeros, no decimal point for a whole number, "0" for ±0. Only for |x| < 1e9, where the rounded value
   * has at most 15 significant digits, so that its decimal digits are exactly the shortest form String gives.
   */
  decimal(x: number, decimals: number, scale: number): void {
    this.room(24);
    let n = Math.round(x * scale);
    if (n === 0) {
      this.bytes[this.length++] = 48; // 0 (also for −0)
      return;
    }
    if (n < 0) {
      this.bytes[this.length++] = 45; // -
      n = -n;
    }
    const whole = Math.floor(n / scale);
    let fraction = n - whole * scale;
    this.digits(whole, 0);
    if (fraction === 0) return;
    let places = decimals;
    while (fraction % 10 === 0) {
      fraction /= 10;
      places--;
    }
    this.bytes[this.length++] = 46; // .
    this.digits(fraction, places);
  }

  /** The bytes written so far (a view, not a copy). */
  view(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }

  /** n ≥ 0 in decimal, left-padded with zeros to `width` digits. */
  private digits(n: number, width: number): void {
    let count = 1;
    for (let p = 10; p <= n; p *= 10) count++;
    if (count < width) count = width;
    for (let i = this.length + count - 1; i >= this.length; i--) {
      const q = Math.floor(n / 10);
      this.bytes[i] = 48 + (n - 10 * q);
      n = q;
    }
    this.length += count;
  }

  private room(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.length + extra) size *= 2;
    const bigger = new Uint8Array(size);
    bigger.set(this.bytes.subarray(0, this.length));
    this.bytes = bigger;
  }
}
