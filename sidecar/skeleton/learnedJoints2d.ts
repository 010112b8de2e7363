import { runModel, type ModelSession } from '../learned/onnxSession.js';
import type { Joints2DPrediction } from './estimateSkeleton.js';
import type { FrontView } from './frontView.js';
import { frontViewImage, imageToCanonical } from './frontViewImage.js';
import { MIXAMO_JOINTS } from './mixamoTemplate.js';

/** Pixels per side of the predictor's input (models/joints2d.md). */
export const JOINTS2D_INPUT_SIZE = 128;

/**
 * The learned 2D joint predictor (models/joints2d.onnx, trained by models/training/train_joints2d.py): the front view
 * as the network's 5-channel image → each joint head's canonical (x, y) and the network's confidence.
 * session: joints2d.onnx from loadModel (input `image` [1, 5, S, S]; outputs `coords` [1, J, 2] in image
 * pixels, `confidence` [1, J]), view: FrontView (res a multiple of S) → Joints2DPrediction
 */
export async function predictJoints2D(session: ModelSession, view: FrontView): Promise<Joints2DPrediction> {
  const size = JOINTS2D_INPUT_SIZE;
  const image = frontViewImage(view, size);
  const out = await runModel(session, { image: { data: image, dims: [1, 5, size, size] } });
  const coords = out.coords.data as Float32Array;
  const confidence = Float32Array.from(out.confidence.data as Float32Array);
  const J = MIXAMO_JOINTS.length;
  if (coords.length !== J * 2 || confidence.length !== J) {
    throw new Error(`joints2d model returned ${coords.length / 2} joints, expected ${J}`);
  }
  const xy = new Float64Array(J * 2);
  for (let j = 0; j < J; j++) {
    const [x, y] = imageToCanonical(coords[2 * j], coords[2 * j + 1], size);
    xy[2 * j] = x;
    xy[2 * j + 1] = y;
  }
  return { xy, confidence };
}
