// Lets Node run the TypeScript sources directly (it strips their types): a relative `./x.js` import that does not
// exist resolves to `./x.ts`, as TypeScript's NodeNext resolution does at compile time. Used for child processes.
import { registerHooks } from "node:module";

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      if (!specifier.startsWith(".") || !specifier.endsWith(".js")) throw error;
      return nextResolve(`${specifier.slice(0, -".js".length)}.ts`, context);
    }
  },
});
