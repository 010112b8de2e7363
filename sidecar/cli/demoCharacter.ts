/**
 * The project's own demo character, built procedurally (no third-party asset): a small humanoid in an A-pose
 * (arms 30° below horizontal), Y up, facing +Z, its left on +X, 1.75 m tall, glTF conventions.
 * The body is the zero set of a smooth union of tapered capsules, meshed with surface nets; the eyes are separate
 * spheres and the hat a separate loose cylinder-and-brim, so the pipeline sees several parts as it would in Blender.
 * Regenerate the committed asset with `node dist/sidecar/cli/generateDemoAsset.js` (see assets/demo/LICENSE.md).
 */
import type { CharacterPart } from '../io/character.js';
import type { Vec3 } from '../types.js';
import { surfaceNets, type DistanceField } from './surfaceNets.js';

/** Where the committed demo asset lives, relative to the repository root. */
export const DEMO_CHARACTER_PATH = 'assets/demo/demo_character.obj';

/** Cell size of the body's surface-nets grid (m): ~6k body vertices. */
const BODY_CELL = 0.019;

/** A capsule whose radius goes linearly from ra at a to rb at b. */
interface TaperedCapsule {
  a: Vec3;
  b: Vec3;
  ra: number;
  rb: number;
  /** blend radius with what came before (smooth union) */
  blend: number;
}

/** buildDemoCharacter: the parts body, eye_L, eye_R, hat (positions in metres). */
export function buildDemoCharacter(): CharacterPart[] {
  // The grid's placement is part of the design: this one yields a closed 2-manifold body (test/cli-demo.test.ts).
  const body = surfaceNets(bodyField(), {
    min: [-0.9, -0.02, -0.205],
    cell: BODY_CELL,
    cells: [Math.ceil(1.8 / BODY_CELL), Math.ceil(1.78 / BODY_CELL), Math.ceil(0.45 / BODY_CELL)],
  });
  return [
    { name: 'body', ...body },
    { name: 'eye_L', ...uvSphere([0.036, 1.625, 0.088], 0.02, 8, 12) },
    { name: 'eye_R', ...uvSphere([-0.036, 1.625, 0.088], 0.02, 8, 12) },
    { name: 'hat', ...hat([0, 1.685, -0.005]) },
  ];
}

/** The body's signed distance (m): negative inside. Left limbs on +X, mirrored for the right. */
function bodyField(): DistanceField {
  const down30: Vec3 = [Math.cos(Math.PI / 6), -Math.sin(Math.PI / 6), 0];
  const along = (p: Vec3, d: Vec3, s: number): Vec3 => [p[0] + d[0] * s, p[1] + d[1] * s, p[2] + d[2] * s];
  const shoulder: Vec3 = [0.17, 1.39, -0.015];
  const elbow = along(shoulder, down30, 0.28);
  const wrist = along(elbow, down30, 0.25);
  const knuckles = along(wrist, down30, 0.09);
  const fingertips = along(knuckles, down30, 0.07);
  const thumbTip: Vec3 = [wrist[0] + 0.045, wrist[1] - 0.045, wrist[2] + 0.05];
  const left: TaperedCapsule[] = [
    { a: [0.06, 1.41, -0.02], b: shoulder, ra: 0.07, rb: 0.062, blend: 0.05 }, // shoulder
    { a: shoulder, b: elbow, ra: 0.052, rb: 0.04, blend: 0.04 }, // upper arm
    { a: elbow, b: wrist, ra: 0.04, rb: 0.03, blend: 0.02 }, // forearm
    { a: wrist, b: knuckles, ra: 0.034, rb: 0.036, blend: 0.015 }, // palm
    { a: knuckles, b: fingertips, ra: 0.033, rb: 0.024, blend: 0.01 }, // fingers (mitten)
    { a: along(wrist, down30, 0.03), b: thumbTip, ra: 0.017, rb: 0.013, blend: 0.012 }, // thumb
    { a: [0.09, 0.93, 0.0], b: [0.1, 0.5, 0.012], ra: 0.085, rb: 0.055, blend: 0.05 }, // thigh
    { a: [0.1, 0.5, 0.012], b: [0.1, 0.1, -0.01], ra: 0.055, rb: 0.038, blend: 0.03 }, // shin
    { a: [0.1, 0.075, -0.035], b: [0.11, 0.045, 0.14], ra: 0.048, rb: 0.04, blend: 0.03 }, // foot
  ];
  const mirror = (c: TaperedCapsule): TaperedCapsule => ({ ...c, a: [-c.a[0], c.a[1], c.a[2]], b: [-c.b[0], c.b[1], c.b[2]] });
  const trunk: TaperedCapsule[] = [
    { a: [0, 0.93, 0.0], b: [0, 1.12, 0.0], ra: 0.13, rb: 0.115, blend: 0.0 }, // pelvis → waist
    { a: [0, 1.12, 0.0], b: [0, 1.32, -0.005], ra: 0.115, rb: 0.135, blend: 0.06 }, // belly → chest
    { a: [-0.07, 1.35, -0.01], b: [0.07, 1.35, -0.01], ra: 0.1, rb: 0.1, blend: 0.06 }, // chest width
    { a: [0, 1.4, -0.015], b: [0, 1.53, 0.0], ra: 0.048, rb: 0.045, blend: 0.04 }, // neck
    { a: [0, 1.575, 0.005], b: [0, 1.655, 0.0], ra: 0.095, rb: 0.092, blend: 0.04 }, // head
    { a: [0, 1.6, 0.09], b: [0, 1.582, 0.112], ra: 0.012, rb: 0.016, blend: 0.012 }, // nose
  ];
  const capsules = [...trunk, ...left, ...left.map(mirror)];
  return (x, y, z) => {
    let d = Infinity;
    for (const c of capsules) d = smoothUnion(d, taperedCapsule(x, y, z, c), c.blend);
    // flat soles: cut everything below the floor
    return Math.max(d, -y);
  };
}

/** Distance-like value to a tapered capsule (exact for equal radii; a close, smooth bound otherwise). */
function taperedCapsule(x: number, y: number, z: number, c: TaperedCapsule): number {
  const bx = c.b[0] - c.a[0], by = c.b[1] - c.a[1], bz = c.b[2] - c.a[2];
  const px = x - c.a[0], py = y - c.a[1], pz = z - c.a[2];
  const t = Math.max(0, Math.min(1, (px * bx + py * by + pz * bz) / (bx * bx + by * by + bz * bz)));
  const dx = px - t * bx, dy = py - t * by, dz = pz - t * bz;
  return Math.sqrt(dx * dx + dy * dy + dz * dz) - (c.ra + t * (c.rb - c.ra));
}

/** Polynomial smooth minimum: a union whose crease is rounded over a width k. */
function smoothUnion(a: number, b: number, k: number): number {
  if (k <= 0 || !Number.isFinite(a)) return Math.min(a, b);
  const h = Math.max(0, Math.min(1, 0.5 + (0.5 * (b - a)) / k));
  return b + (a - b) * h - k * h * (1 - h);
}

/** A closed UV sphere: rings × segments quads, poles as single vertices. */
export function uvSphere(center: Vec3, radius: number, rings: number, segments: number): { positions: Float32Array; triangles: Uint32Array } {
  const positions: number[] = [center[0], center[1] + radius, center[2]];
  for (let r = 1; r < rings; r++) {
    const polar = (Math.PI * r) / rings;
    for (let s = 0; s < segments; s++) {
      const azimuth = (2 * Math.PI * s) / segments;
      positions.push(
        center[0] + radius * Math.sin(polar) * Math.sin(azimuth),
        center[1] + radius * Math.cos(polar),
        center[2] + radius * Math.sin(polar) * Math.cos(azimuth),
      );
    }
  }
  positions.push(center[0], center[1] - radius, center[2]);
  const bottom = positions.length / 3 - 1;
  const ring = (r: number, s: number) => 1 + (r - 1) * segments + (s % segments);
  const triangles: number[] = [];
  for (let s = 0; s < segments; s++) {
    triangles.push(0, ring(1, s), ring(1, s + 1));
    triangles.push(bottom, ring(rings - 1, s + 1), ring(rings - 1, s));
    for (let r = 1; r + 1 < rings; r++) triangles.push(ring(r, s), ring(r + 1, s), ring(r + 1, s + 1), ring(r, s), ring(r + 1, s + 1), ring(r, s + 1));
  }
  return { positions: Float32Array.from(positions), triangles: Uint32Array.from(triangles) };
}

/** A hat sitting loose on the head: a closed crown cylinder on a closed brim disc, base centre at `base`. */
function hat(base: Vec3): { positions: Float32Array; triangles: Uint32Array } {
  const brim = closedCylinder(base, 0.165, 0.012, 24);
  const crown = closedCylinder([base[0], base[1] + 0.012, base[2]], 0.092, 0.09, 24);
  const offset = brim.positions.length / 3;
  return {
    positions: Float32Array.from([...brim.positions, ...crown.positions]),
    triangles: Uint32Array.from([...brim.triangles, ...Array.from(crown.triangles, (i) => i + offset)]),
  };
}

/** A closed cylinder along +Y: base centre, radius, height, segments around; caps are fans around a centre vertex. */
function closedCylinder(base: Vec3, radius: number, height: number, segments: number): { positions: Float32Array; triangles: Uint32Array } {
  const positions: number[] = [];
  for (const y of [base[1], base[1] + height]) {
    for (let s = 0; s < segments; s++) {
      const azimuth = (2 * Math.PI * s) / segments;
      positions.push(base[0] + radius * Math.sin(azimuth), y, base[2] + radius * Math.cos(azimuth));
    }
  }
  const bottomCentre = positions.length / 3;
  positions.push(base[0], base[1], base[2], base[0], base[1] + height, base[2]);
  const topCentre = bottomCentre + 1;
  const triangles: number[] = [];
  for (let s = 0; s < segments; s++) {
    const n = (s + 1) % segments;
    triangles.push(s, n, segments + n, s, segments + n, segments + s); // side, facing out
    triangles.push(bottomCentre, n, s); // bottom cap, facing down
    triangles.push(topCentre, segments + s, segments + n); // top cap, facing up
  }
  return { positions: Float32Array.from(positions), triangles: Uint32Array.from(triangles) };
}
