/**
 * hypot3: √(a² + b² + c²), the same double as Math.hypot(a, b, c), computed as V8 computes it (each value over the
 * largest, squares summed with Kahan's compensation, the root times the largest; ±Infinity before NaN). V8's builtin
 * allocates an array for its arguments on every call: called once per triangle on the surface (area weights, normals),
 * that was 8 MB of garbage per apply on each of two threads. test/hypot3.test.ts holds it to Math.hypot bit for bit.
 * a, b, c: numbers → number
 */
export function hypot3(a: number, b: number, c: number): number {
  const x = Math.abs(a), y = Math.abs(b), z = Math.abs(c);
  if (x === Infinity || y === Infinity || z === Infinity) return Infinity;
  if (x !== x || y !== y || z !== z) return NaN;
  let max = x;
  if (y > max) max = y;
  if (z > max) max = z;
  if (max === 0) return 0;
  let sum = 0, compensation = 0;
  let n = x / max;
  let summand = n * n - compensation;
  let preliminary = sum + summand;
  compensation = (preliminary - sum) - summand;
  sum = preliminary;
  n = y / max;
  summand = n * n - compensation;
  preliminary = sum + summand;
  compensation = (preliminary - sum) - summand;
  sum = preliminary;
  n = z / max;
  summand = n * n - compensation;
  sum += summand;
  return Math.sqrt(sum) * max;
}
