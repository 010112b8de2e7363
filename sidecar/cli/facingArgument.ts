/**
 * The --facing value of `autorig rig` and `autorig pose`: the direction the character faces in the file, where its
 * shape does not tell (mesh/facingHint, skeleton/skeletonFacing), and how the commands name a direction back to the user.
 */
import type { Vec3 } from '../types.js';

/** What --facing accepts, for the commands' error messages. */
export const FACING_VALUES = 'an axis (+x, -x, +y, -y, +z, -z) or a direction X,Y,Z';

/** facingFromText: a --facing value, an axis with its sign (+x, -y...) or three numbers X,Y,Z → Vec3, or null when it is neither (or zero). */
export function facingFromText(text: string): Vec3 | null {
  const axis = /^([+-])([xyz])$/i.exec(text.trim());
  if (axis) {
    const out: Vec3 = [0, 0, 0];
    out['xyz'.indexOf(axis[2].toLowerCase())] = axis[1] === '-' ? -1 : 1;
    return out;
  }
  const numbers = text.split(',').map((x) => Number(x.trim()));
  if (numbers.length !== 3 || numbers.some((x) => !Number.isFinite(x)) || numbers.every((x) => x === 0)) return null;
  return numbers as Vec3;
}

/** axisName: a direction → the signed input axis nearest it, as --facing spells it ('+z', '-y'...). */
export function axisName(direction: Vec3): string {
  let best = 0;
  for (let a = 1; a < 3; a++) if (Math.abs(direction[a]) > Math.abs(direction[best])) best = a;
  return `${direction[best] < 0 ? '-' : '+'}${'xyz'[best]}`;
}

/**
 * conventionWarning: the stderr line for a character whose facing the file's convention decided (its shape did not
 * tell): which way it was taken to face and the --facing that turns it. input: the file, forward: the direction taken.
 */
export function conventionWarning(input: string, forward: Vec3): string {
  return `autorig: ${input}: its shape does not tell which way it faces; it was taken to face `
    + `${axisName(forward)} (the file's convention). If left and right are swapped, run again with `
    + `--facing ${axisName(forward.map((x) => -x) as Vec3)}\n`;
}
