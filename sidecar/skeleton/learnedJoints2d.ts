import { runModel, type ModelSession } from '../learned/onnxSession.js';
import { HYBRID_MIN_CONFIDENCE } from './estimateSkeleton.js';
import type { Joints2DPrediction } from './joints2d.js';
import { renderFrontView, type FrontView } from './frontView.js';
import { frontViewImage, imageToCanonical } from './frontViewImage.js';
import { MIXAMO_JOINTS } from './mixamoTemplate.js';
import { bodyCrop, keepSureFirstLook, SMALL_BODY_ZOOM, unzoomFromCrop, zoomedToCrop } from './bodyCrop.js';

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

/**
 * predictJoints2D, and where the body is small in the view (bodyCrop's box fits it SMALL_BODY_ZOOM times over: a hat
 * over half as tall as the body), again on a view of that box alone, whose reading stands but for the joints the first
 * look was sure of and it is not (keepSureFirstLook; skeleton/bodyCrop.ts); its joints come back in the whole view's
 * canonical frame.
 * session: joints2d.onnx (as predictJoints2D), canonical: Float32Array #V*3, triangles: Uint32Array #T*3 (those the
 * view was rendered from), view: their front view → Joints2DPrediction
 */
export async function predictJoints2DOfBody(
  session: ModelSession, canonical: Float32Array, triangles: Uint32Array, view: FrontView,
): Promise<Joints2DPrediction> {
  const first = await predictJoints2D(session, view);
  const crop = bodyCrop(view, first.xy);
  if (!(crop.scale > SMALL_BODY_ZOOM)) return first;
  const second = await predictJoints2D(session, renderFrontView(zoomedToCrop(canonical, crop), triangles, view.res));
  unzoomFromCrop(second.xy, crop);
  return keepSureFirstLook(first, second, HYBRID_MIN_CONFIDENCE);
}
