/**
 * Everything a procedural humanoid is made from, drawn from its seed: size and proportions (2 to 9 heads tall), build,
 * pose, clothing and accessories, how the mesh is made (separate parts or one fused surface, clean or chaotic
 * triangulation, vertex count). The body, clothes and mesh are then pure functions of these numbers, and the whole
 * object goes into the character's meta so a sample says how it was made.
 */
import { SeededRandom } from '../seededRandom.js';

export type Build = 'thin' | 'average' | 'heavy' | 'muscular' | 'child';
/** T: arms level; A: arms 20–50° below level; down: hanging beside the body. */
export type PoseKind = 'T' | 'A' | 'down';

/** What may differ between the left and the right side (slight asymmetry). */
export interface SideParams {
  /** arm angle below horizontal wanted (degrees); the pose solver may raise it to keep the arm off the body */
  armDegrees: number;
  /** arm swung forward (degrees, about the vertical) */
  armForwardDegrees: number;
  /** elbow bend (degrees; the forearm turns forward) */
  elbowDegrees: number;
  /** knee bend (degrees; the knee comes forward) */
  kneeDegrees: number;
  /** leg spread from vertical (degrees, outwards) */
  legSpreadDegrees: number;
  /** limb radius and length multipliers (≈ 1) */
  limbScale: number;
  lengthScale: number;
  /** this arm's pose where the two arms were drawn apart (withAsymmetricArms); absent: the character's pose */
  armPose?: PoseKind;
}

/** Body proportions as multipliers around the build's typical values (≈ 1 each). */
export interface Proportions {
  neck: number;
  torso: number;
  shoulders: number;
  hips: number;
  chest: number;
  waist: number;
  limbs: number;
  arms: number;
  hands: number;
  feet: number;
  headWidth: number;
  headDepth: number;
  belly: number;
}

export interface ClothingParams {
  skirt?: { hem: number; flare: number };
  coat?: { hem: number; flare: number };
  sleeves?: { flare: number };
  cape?: { hem: number; width: number };
  hair?: { long: boolean; volume: number; length: number };
  hat?: { style: 'brim' | 'cone' | 'cap'; size: number };
  shoes?: { boots: boolean; bulk: number };
  prop?: { kind: 'sword' | 'staff'; hand: 'left' | 'right'; length: number };
  eyes?: { size: number };
  teeth?: { size: number };
}

export interface HumanoidParams {
  seed: number;
  /** floor to the top of the head (m) */
  heightMetres: number;
  /** total height / head height */
  headsTall: number;
  build: Build;
  pose: PoseKind;
  /** clearance kept between arm and body, as a fraction of the height; negative: touching (the surfaces merge) */
  armGap: number;
  left: SideParams;
  right: SideParams;
  proportions: Proportions;
  clothing: ClothingParams;
  /** true: one surface (clothes, hair, eyes, props unioned into the body field); false: separate overlapping parts */
  fused: boolean;
  /** true: random diagonals, tangent jitter and random edge splits (AI-generator-like); false: clean surface nets */
  chaotic: boolean;
  /** chaotic meshes: extra vertices from edge splits as a share of the surface-nets vertices */
  splitShare: number;
  targetVertices: number;
}

/** The vertex-count range a sample may ask for. */
export const VERTEX_RANGE: [number, number] = [20_000, 300_000];

/**
 * sampleHumanoidParams: seed (integer), targetVertices (optional override, within VERTEX_RANGE) → HumanoidParams.
 * The same seed always gives the same parameters (the vertex count is drawn whether or not it is overridden, so an
 * override changes nothing else).
 */
export function sampleHumanoidParams(seed: number, targetVertices?: number): HumanoidParams {
  const rng = new SeededRandom(seed);
  const build = pickWeighted(rng, [['average', 0.3], ['thin', 0.17], ['heavy', 0.17], ['muscular', 0.18], ['child', 0.18]] as const);
  let headsTall: number;
  let heightMetres: number;
  if (build === 'child') {
    headsTall = rng.range(3.2, 6);
    heightMetres = rng.range(0.5, 1.5);
  } else {
    const style = rng.next();
    headsTall = style < 0.2 ? rng.range(2, 4) : style < 0.35 ? rng.range(4, 6) : rng.range(6, 9);
    heightMetres = rng.range(0.5, 2.2);
  }
  const pose = pickWeighted(rng, [['T', 0.3], ['A', 0.4], ['down', 0.3]] as const);
  // only hanging arms may rest against the body
  const touching = rng.chance(0.12) && pose === 'down';
  const overlap = rng.range(0.001, 0.005), clearance = rng.range(0.006, 0.022);
  const armGap = touching ? -overlap : clearance;
  const bent = rng.chance(0.4);
  const asym = rng.range(0, 1);
  const side = (): SideParams => {
    const armBase = pose === 'T' ? rng.range(-2, 6) : pose === 'A' ? rng.range(20, 50) : rng.range(80, 90);
    return {
      armDegrees: armBase,
      armForwardDegrees: rng.range(-4, 12),
      elbowDegrees: bent ? rng.range(4, 28) : rng.range(0, 5),
      kneeDegrees: bent ? rng.range(3, 18) : rng.range(0, 3),
      legSpreadDegrees: rng.range(0, 7),
      limbScale: 1 + 0.04 * asym * rng.normal(),
      lengthScale: 1 + 0.02 * asym * rng.normal(),
    };
  };
  const left = side();
  const right = side();
  // the same pose on both sides, up to the asymmetry
  for (const key of ['armDegrees', 'armForwardDegrees', 'elbowDegrees', 'kneeDegrees', 'legSpreadDegrees'] as const) {
    const mean = (left[key] + right[key]) / 2;
    left[key] = mean + (left[key] - mean) * 0.25 * asym;
    right[key] = mean + (right[key] - mean) * 0.25 * asym;
  }
  const vary = (spread: number) => Math.exp(spread * rng.normal());
  const proportions: Proportions = {
    neck: vary(0.15), torso: vary(0.07), shoulders: vary(0.08), hips: vary(0.08), chest: vary(0.08), waist: vary(0.08),
    limbs: vary(0.08), arms: vary(0.05), hands: vary(0.08), feet: vary(0.08), headWidth: vary(0.06), headDepth: vary(0.05),
    belly: build === 'heavy' ? rng.range(0.5, 1) : rng.range(0, 0.3),
  };

  const clothing: ClothingParams = {};
  const lowerGarment = rng.next();
  if (lowerGarment < 0.2) clothing.skirt = { hem: rng.range(0.25, 0.85), flare: rng.range(1.05, 1.6) };
  else if (lowerGarment < 0.33) clothing.coat = { hem: rng.range(0.45, 0.8), flare: rng.range(1.0, 1.35) };
  if (rng.chance(0.15)) clothing.sleeves = { flare: rng.range(1.4, 2.4) };
  if (rng.chance(0.13)) clothing.cape = { hem: rng.range(0.45, 0.9), width: rng.range(0.9, 1.4) };
  if (rng.chance(0.6)) clothing.hair = { long: rng.chance(0.4), volume: rng.range(1.04, 1.18), length: rng.range(0.2, 0.7) };
  if (rng.chance(0.25)) clothing.hat = { style: rng.pick(['brim', 'cone', 'cap'] as const), size: rng.range(0.95, 1.3) };
  if (rng.chance(0.5)) clothing.shoes = { boots: rng.chance(0.4), bulk: rng.range(1.1, 1.45) };
  if (rng.chance(0.2)) clothing.prop = { kind: rng.chance(0.55) ? 'sword' : 'staff', hand: rng.chance(0.5) ? 'left' : 'right', length: rng.range(0.85, 1.2) };
  if (rng.chance(0.5)) clothing.eyes = { size: rng.range(0.8, 1.4) };
  if (rng.chance(0.25)) clothing.teeth = { size: rng.range(0.8, 1.2) };

  const fused = rng.chance(0.45);
  if (fused) delete clothing.teeth; // teeth lie inside the head: a fused surface would swallow them
  const chaotic = rng.chance(0.85);
  const splitShare = rng.range(0.15, 0.6);
  const drawn = rng.chance(0.85) ? logUniform(rng, 20_000, 80_000) : logUniform(rng, 80_000, VERTEX_RANGE[1]);
  return {
    seed, heightMetres, headsTall, build, pose, armGap, left, right, proportions, clothing, fused, chaotic, splitShare,
    targetVertices: targetVertices ?? Math.round(drawn),
  };
}

/** The least angle (degrees) between the two arms' wanted angles withAsymmetricArms draws. */
export const ASYMMETRIC_ARMS_MIN_APART = 30;

/** The wanted arm angles withAsymmetricArms draws from, by pose (degrees below horizontal; negative: raised). */
const ASYMMETRIC_ARM_RANGES: Record<PoseKind, [number, number]> = { T: [-45, 6], A: [20, 55], down: [78, 90] };

/**
 * withAsymmetricArms: params (sampleHumanoidParams) → the same character with each arm posed on its own: a pose
 * (raised or level, A, hanging) and an angle drawn per arm, the two at least ASYMMETRIC_ARMS_MIN_APART apart, each
 * arm's swing forward and elbow bend drawn apart too. Everything else is kept, so a character and its asymmetric twin
 * differ only in their arms. The draws come from their own stream of the seed: sampleHumanoidParams' draws, and so
 * every dataset made without this, are unchanged. A touching pose (armGap < 0) keeps its gap only for a hanging arm's
 * twin: both arms then keep the drawn clearance instead.
 */
export function withAsymmetricArms(params: HumanoidParams): HumanoidParams {
  const rng = new SeededRandom((params.seed * 2654435761 + 0x5eed) >>> 0);
  const kinds: PoseKind[] = ['T', 'A', 'down'];
  let left: PoseKind, right: PoseKind, leftDeg: number, rightDeg: number;
  do {
    left = rng.pick(kinds);
    right = rng.pick(kinds);
    leftDeg = rng.range(...ASYMMETRIC_ARM_RANGES[left]);
    rightDeg = rng.range(...ASYMMETRIC_ARM_RANGES[right]);
  } while (Math.abs(leftDeg - rightDeg) < ASYMMETRIC_ARMS_MIN_APART);
  const side = (s: SideParams, pose: PoseKind, armDegrees: number): SideParams => ({
    ...s, armPose: pose, armDegrees, armForwardDegrees: rng.range(-4, 25), elbowDegrees: rng.chance(0.5) ? rng.range(4, 40) : rng.range(0, 5),
  });
  const armGap = params.armGap < 0 && !(left === 'down' && right === 'down') ? rng.range(0.006, 0.022) : params.armGap;
  return { ...params, armGap, left: side(params.left, left, leftDeg), right: side(params.right, right, rightDeg) };
}

/** The clothing and accessories present, as names for meta. */
export function clothingList(c: ClothingParams): string[] {
  const names: string[] = [];
  if (c.skirt) names.push('skirt');
  if (c.coat) names.push('long coat');
  if (c.sleeves) names.push('wide sleeves');
  if (c.cape) names.push('cape');
  if (c.hair) names.push(c.hair.long ? 'long hair' : 'short hair');
  if (c.hat) names.push(`${c.hat.style} hat`);
  if (c.shoes) names.push(c.shoes.boots ? 'boots' : 'shoes');
  if (c.prop) names.push(`${c.prop.kind} (${c.prop.hand} hand)`);
  if (c.eyes) names.push('eyes');
  if (c.teeth) names.push('teeth');
  return names;
}

function pickWeighted<T>(rng: SeededRandom, options: readonly (readonly [T, number])[]): T {
  let r = rng.next() * options.reduce((s, [, w]) => s + w, 0);
  for (const [value, w] of options) {
    r -= w;
    if (r < 0) return value;
  }
  return options[options.length - 1][0];
}

function logUniform(rng: SeededRandom, lo: number, hi: number): number {
  return Math.exp(rng.range(Math.log(lo), Math.log(hi)));
}
