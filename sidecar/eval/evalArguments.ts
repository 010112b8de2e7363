/**
 * What the evals' command lines share (`autorig eval poses`, `autorig eval correctives`): walking the arguments.
 */

/**
 * forEachEvalArgument: calls visit with each argument in order and a reader of its value (the next argument, which it
 * then skips); the reader throws fail(`<option> needs a value`) when there is none, it is empty or it is another option.
 */
export function forEachEvalArgument(args: string[], fail: (message: string) => Error, visit: (arg: string, value: () => string) => void): void {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    visit(arg, () => {
      const v = args[++i];
      if (v === undefined || v === '' || v.startsWith('--')) throw fail(`${arg} needs a value`);
      return v;
    });
  }
}
