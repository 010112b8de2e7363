/**
 * Survey of the canonical frame finder on procedural characters (a measuring helper, not a test: run it through
 * .tmp scripts or import it from a test). Procedural characters stand +Y up facing +Z with their left on +X; each
 * is read as made and turned about up, and every frame is compared with the true one.
 */
import type { CanonicalFrame } from '../sidecar/mesh/canonicalFrame.js';
import type { Vec3 } from '../sidecar/types.js';

export type FrameFinder = (positions: Float32Array, triangles: Uint32Array) => CanonicalFrame;

/** What went wrong with one frame: 'ok', or the first of up/lateral/forward that is off by more than the tolerance. */
export type FrameReading = 'ok' | 'up' | 'upside-down' | 'lateral' | 'backwards' | 'forward';

/** Positions turned by `degrees` about +Y (right-handed): Float32Array #V*3 → Float32Array #V*3. */
export function turnAboutUp(positions: Float32Array, degrees: number): Float32Array {
  const c = Math.cos(degrees * Math.PI / 180), s = Math.sin(degrees * Math.PI / 180);
  const out = new Float32Array(positions.length);
  for (let i = 0; i < positions.length; i += 3) {
    const x = positions[i], z = positions[i + 2];
    out[i] = c * x + s * z;
    out[i + 1] = positions[i + 1];
    out[i + 2] = -s * x + c * z;
  }
  return out;
}

/** The true frame of a procedural character turned by `degrees` about +Y. */
export function turnedTruth(degrees: number): { up: Vec3; forward: Vec3; left: Vec3 } {
  const c = Math.cos(degrees * Math.PI / 180), s = Math.sin(degrees * Math.PI / 180);
  return { up: [0, 1, 0], forward: [s, 0, c], left: [c, 0, -s] };
}

/** Classifies a found frame against the truth; axes within `toleranceDegrees` of the truth count as right. */
export function readFrame(found: CanonicalFrame, truth: { up: Vec3; forward: Vec3; left: Vec3 }, toleranceDegrees = 10): FrameReading {
  const cosTol = Math.cos(toleranceDegrees * Math.PI / 180);
  const dot = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const up = dot(found.frame.up, truth.up);
  if (up < -cosTol) return 'upside-down';
  if (up < cosTol) return Math.abs(dot(found.frame.up, truth.left)) > cosTol ? 'lateral' : 'up';
  const fw = dot(found.frame.forward, truth.forward);
  if (fw < -cosTol) return 'backwards';
  if (fw < cosTol) return Math.abs(dot(found.frame.forward, truth.left)) > cosTol ? 'lateral' : 'forward';
  return 'ok';
}
