/**
 * The pose-dependent deformations a corrective bake may use (protocol.json CorrectiveOptions.method), in a module of
 * their own so that the command line can print its usage and check its arguments without loading the bake.
 */

/** The pose-dependent deformations a request may name; the first is the default. */
export const CORRECTIVE_METHODS = ['poseDependentDualQuaternion', 'poseDependent', 'dualQuaternion'] as const;
export type CorrectiveMethod = (typeof CORRECTIVE_METHODS)[number];
