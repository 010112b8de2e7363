/**
 * The hand bone's tail (sidecar/skeleton/estimateSkeleton.ts plausibleHandTip): a traced finger tip that turns back
 * up the forearm, or is far longer or shorter than a hand, is replaced by a palm's length beyond the wrist. Before,
 * procedural identity 9 100 009 (arms down beside a fused robe) got hand bones running from the wrists up to the head,
 * 3.6 forearms long, so its head took half its weight from the hands; 9 100 003's hands were 0.02 forearms long.
 */
import { describe, expect, it } from 'vitest';
import { generateProceduralHumanoid } from '../sidecar/data/procedural/proceduralHumanoid.js';
import { rigCharacterAsync } from '../sidecar/pipeline.js';
import { plausibleHandTip } from '../sidecar/skeleton/estimateSkeleton.js';

describe('the hand bone continues the forearm', () => {
  it('accepts a hand along the forearm, refuses one turned back, sideways, too long or too short', () => {
    const elbow: [number, number] = [0.2, 0.3], wrist: [number, number] = [0.2, 0.1];
    expect(plausibleHandTip(elbow, wrist, [0.21, -0.05])).toBe(true);
    expect(plausibleHandTip(elbow, wrist, [0.2, 0.25])).toBe(false);
    expect(plausibleHandTip(elbow, wrist, [0.35, 0.1])).toBe(false);
    expect(plausibleHandTip(elbow, wrist, [0.2, -0.5])).toBe(false);
    expect(plausibleHandTip(elbow, wrist, [0.2, 0.095])).toBe(false);
    expect(plausibleHandTip(elbow, wrist, wrist)).toBe(false);
  });

  it.each([9_100_009, 9_100_003])('rigs procedural identity %i with hands that continue its forearms, and no hand weight on its head', async (seed) => {
    const character = generateProceduralHumanoid(seed, { targetVertices: 20_000 });
    const rig = await rigCharacterAsync(character.parts);
    const joints = rig.skeleton.joints;
    for (const side of ['Left', 'Right']) {
      const fore = joints.find((j) => j.name.endsWith(`${side}ForeArm`))!, hand = joints.find((j) => j.name.endsWith(`${side}Hand`))!;
      const a = hand.head.map((x, i) => x - fore.head[i]), b = hand.tail.map((x, i) => x - hand.head[i]);
      const la = Math.hypot(...a), lb = Math.hypot(...b);
      expect((a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) / (la * lb), `${side} hand · forearm`).toBeGreaterThan(0.8);
      expect(lb / la, `${side} hand / forearm length`).toBeGreaterThan(0.3);
      expect(lb / la).toBeLessThan(1.2);
    }
    // the head (above the neck joint) takes no weight from either hand
    const hands = new Set(joints.flatMap((j, b) => (/(Left|Right)Hand$/.test(j.name) ? [b] : [])));
    const neckY = joints.find((j) => j.name.endsWith('Neck'))!.tail[1];
    let headWeight = 0, handOnHead = 0;
    rig.objects.forEach((object, p) => {
      const positions = character.parts[p].positions;
      for (let v = 0; v < positions.length / 3; v++) {
        if (positions[3 * v + 1] < neckY) continue;
        for (let q = 0; q < object.influences; q++) {
          headWeight += object.weights[v * object.influences + q];
          if (hands.has(object.indices[v * object.influences + q])) handOnHead += object.weights[v * object.influences + q];
        }
      }
    });
    expect(headWeight).toBeGreaterThan(100);
    expect(handOnHead / headWeight).toBeLessThan(0.001);
  }, 60_000);
});
