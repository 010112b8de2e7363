/**
 * The case stream: which layer each case fuzzes, drawn from one seeded generator so that (seed, index) names a case
 * for good. Cases are made one at a time as the runner needs them (a 24 MB case is not kept around).
 */
import type { FuzzCase, Layer } from './cases.js';
import { msgpackCase } from './msgpackCases.js';
import { SeededRandom } from './random.js';
import { schemaCase } from './schemaCases.js';
import { sessionCase } from './sessionCases.js';
import { websocketCase, type Target } from './websocketCases.js';

/** How often each layer is drawn. */
export const LAYER_WEIGHTS: ReadonlyArray<readonly [Layer, number]> = [
  ['websocket', 30],
  ['msgpack', 30],
  ['schema', 30],
  ['session', 10],
];

/** Makes the cases of one seed in order. */
export class CaseStream {
  private readonly rng: SeededRandom;
  private index = 0;

  constructor(seed: number) {
    this.rng = new SeededRandom(seed);
  }

  /** The next case; `target` is the server it will be sent to (upgrade cases name its port and token). */
  next(target: Target): { index: number; fuzzCase: FuzzCase } {
    const index = this.index++;
    // Each case draws from its own stream, so that a change in one generator does not reshuffle every later case.
    const rng = new SeededRandom(this.rng.uint32());
    const layer = rng.weighted(LAYER_WEIGHTS);
    let fuzzCase: FuzzCase;
    switch (layer) {
      case 'websocket':
        fuzzCase = websocketCase(rng, index, target);
        break;
      case 'msgpack':
        fuzzCase = msgpackCase(rng, index);
        break;
      case 'schema':
        fuzzCase = schemaCase(rng, index);
        break;
      default:
        fuzzCase = sessionCase(rng, index);
    }
    return { index, fuzzCase };
  }
}
