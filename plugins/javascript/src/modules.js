// How promptfoo loads a `file://` module's function, evaluated (by
// engine.rs) only in the contexts of assertions that name a file: a
// function of nothing that returns the two steps.
(function () {
  'use strict';
  return {
    // A CommonJS file's namespace as `import()` gives it: `{default:
    // module.exports}`, the module run by its wrapper function `body`.
    commonjs(body, filename) {
      const module = { exports: {} };
      body.call(module.exports, module.exports, require, module, filename, '.');
      return { default: module.exports };
    },
    // promptfoo's `importModule` and `loadFromJavaScriptFile`: the function
    // a module namespace gives for `name` (or its default).
    pick(namespace, name, path) {
      const module = namespace?.default?.default || namespace?.default || namespace;
      const found = name ? module?.[name] : module;
      if (typeof found === 'function') return found;
      if (!name && typeof found?.default === 'function') return found.default;
      if (name && module !== namespace && typeof namespace?.[name] === 'function') {
        throw new Error(`Assertion malformed: ${path} has no function \`${name}\` (its default export hides its named exports, as in promptfoo)`);
      }
      if (name) {
        const names = Object.keys(module ?? {}).map((key) => `\`${key}\``).join(', ');
        throw new Error(`Assertion malformed: ${path} has no function \`${name}\` (it exports ${names || 'nothing'})`);
      }
      throw new Error(`Assertion malformed: ${path} must export a function or have a default export as a function`);
    },
  };
})
