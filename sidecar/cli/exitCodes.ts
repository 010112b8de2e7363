/** The exit codes of the `autorig` command line (`autorig --help` lists them). */

/** done */
export const EXIT_OK = 0;
/** an internal error (a bug), or a command that made nothing (`autorig data` with every sample failed) */
export const EXIT_FAILURE = 1;
/** the input cannot be rigged or posed: an AutoRigError, its code printed (with several inputs: some of them) */
export const EXIT_CANNOT_RIG = 2;
/** a wrong command line (EX_USAGE) */
export const EXIT_USAGE = 64;
