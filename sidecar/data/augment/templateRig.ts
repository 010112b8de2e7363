/**
 * A dev character's own rig, read as our template: the artist's joints mapped onto the 23 MIXAMO_JOINTS (missing ones
 * completed), the artist's weights merged onto them, and the character's frame. This is the "mapped original" that
 * augmentation re-proportions, and itself a RiggedCharacter (what the eval compares against, in training terms).
 */
import type { Character } from '../../io/character.js';
import { findCanonicalFrame } from '../../mesh/canonicalFrame.js';
import { mergeParts } from '../../mesh/mergeParts.js';
import { mapRigToTemplate, mergeWeightsToTemplate, templateSkeleton, TemplateMappingError } from '../../eval/templateMapping.js';
import { MIXAMO_JOINTS } from '../../skeleton/mixamoTemplate.js';
import type { Frame, MeshPart, Vec3 } from '../../types.js';
import type { RiggedCharacter } from '../trainingSample.js';
import { completeTemplateJoints, headTopAbove, type CompletedJoints } from './completeTemplateJoints.js';

const HEAD = MIXAMO_JOINTS.indexOf('Head');

export interface TemplateRig {
  /** the character as a RiggedCharacter: parts (positions and triangles only), completed joints, merged weights (4 per vertex) */
  rigged: RiggedCharacter;
  /** the 23 joints with which are the artist's, and every bone's end */
  joints: CompletedJoints;
  /** the character's up, forward and left, found from its mesh */
  frame: Frame;
  /** how mapRigToTemplate matched the artist's joints */
  method: 'names' | 'positions';
}

/**
 * templateRigOf: a rigged character → TemplateRig. Weights are the artist's merged onto the template (mergeWeightsToTemplate:
 * top-4, largest first, rows sum to 1, HeadTop_End never weighted), with indices into MIXAMO_JOINTS; every part keeps
 * its own table. meta holds the source name and mapping method.
 * character: parts and rig (loadCharacter), name: what meta calls it → TemplateRig.
 * Throws TemplateMappingError (BAD_SKELETON) when the character has no rig or the rig cannot be mapped.
 */
export function templateRigOf(character: Character, name: string): TemplateRig {
  if (!character.rig || !character.rig.skins.some((s) => s)) throw new TemplateMappingError(`${name} has no skinned skeleton`);
  const parts: MeshPart[] = character.parts.map((p) => ({ name: p.name, positions: p.positions, triangles: p.triangles }));
  const mapping = mapRigToTemplate(character.rig, parts);
  const template = templateSkeleton(character.rig, mapping, parts);
  const merged = mergeWeightsToTemplate(character, mapping, template);
  const mesh = mergeParts(parts);
  const frame = findCanonicalFrame(mesh.positions, mesh.triangles).frame;
  const weights = merged.map((w) => {
    if (w.influences !== 4) throw new Error(`mergeWeightsToTemplate gave ${w.influences} influences, expected 4`);
    return { indices: Uint16Array.from(w.indices, (slot) => template.templateIndex[slot]), weights: w.weights };
  });
  const headSlot = template.templateIndex.indexOf(HEAD);
  const headTop = headTopAbove(template.skeleton.joints[headSlot].head, frame.up, carriedBy(parts, weights, HEAD));
  const joints = completeTemplateJoints(template, frame.forward, headTop);

  const flat = new Float32Array(MIXAMO_JOINTS.length * 3);
  joints.heads.forEach((h, t) => flat.set(h, 3 * t));
  return {
    rigged: { name, parts, joints: flat, weights, meta: { source: name, mapping: mapping.method } },
    joints,
    frame,
    method: mapping.method,
  };
}

/** The vertices of every part whose weight on template joint t is at least one half. weights: per part, 4 per vertex. */
function carriedBy(parts: MeshPart[], weights: { indices: Uint16Array; weights: Float32Array }[], t: number): Vec3[] {
  const out: Vec3[] = [];
  parts.forEach((part, p) => {
    const { indices, weights: w } = weights[p];
    for (let v = 0; v < part.positions.length / 3; v++) {
      let sum = 0;
      for (let k = 0; k < 4; k++) if (indices[4 * v + k] === t) sum += w[4 * v + k];
      if (sum >= 0.5) out.push([part.positions[3 * v], part.positions[3 * v + 1], part.positions[3 * v + 2]]);
    }
  });
  return out;
}
