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
    // promptfoo's `importModule(path, name)`: the module's value (its
    // default export, else its namespace), or the export `name` of it.
    imported(namespace, name) {
      const module = namespace?.default?.default || namespace?.default || namespace;
      return name ? module?.[name] : module;
    },
    // promptfoo's `getJavascriptTransformFunction`: the function a
    // transform's module gives.
    transformFunction(namespace, name, path) {
      const module = namespace?.default?.default || namespace?.default || namespace;
      if (name && Object.prototype.hasOwnProperty.call(module, name) && typeof module[name] === 'function') return module[name];
      if (typeof module === 'function') return module;
      if (module?.default && typeof module.default === 'function') return module.default;
      throw new Error(`Transform ${path} must export a function, have a default export as a function, or export the specified function "${name}"`);
    },
    // A value as JSON text (`undefined` for `undefined`), refusing what
    // JSON would silently drop or change: a function, a symbol, a bigint,
    // an accessor, a cycle. `what` names the value in the error.
    plain(value, what) {
      const seen = new Set();
      const walk = (v, path) => {
        if (typeof v === 'function') throw new Error(`${path} is a function, which cannot leave the sandbox: write it as a value`);
        if (typeof v === 'symbol' || typeof v === 'bigint') throw new Error(`${path} is a ${typeof v}, which JSON cannot hold`);
        if (v === null || typeof v !== 'object') return;
        if (seen.has(v)) throw new Error(`${path} refers back to itself`);
        seen.add(v);
        if (typeof v.toJSON !== 'function') {
          for (const key of Object.keys(v)) {
            const at = Array.isArray(v) ? `${path}[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
            const descriptor = Object.getOwnPropertyDescriptor(v, key);
            if (descriptor && !('value' in descriptor)) throw new Error(`${at} is a getter, which cannot leave the sandbox: write it as a value`);
            walk(v[key], at);
          }
        }
        seen.delete(v);
      };
      walk(value, what);
      return JSON.stringify(value);
    },
  };
})
