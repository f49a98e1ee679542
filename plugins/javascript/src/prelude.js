// The sandbox's globals and the harness the plugin drives, evaluated once
// in each fresh JavaScript context (engine.rs). It is a function of the
// one native it needs (`log`, to the host's capped log) and returns the
// harness, which stays out of the global scope: the assertion's code sees
// only what Node code expects to find (console, timers, require, process,
// fetch), where what a sandbox cannot give throws a clear error.
(function (log) {
  'use strict';
  const FunctionConstructor = Function;
  const stringify = JSON.stringify;

  const denied = (what, why) => new Error(`${what} is not available: assertions run sandboxed${why || ''}`);

  const require = function require(name) {
    throw denied(`require('${String(name)}')`);
  };
  const mainModule = Object.freeze({ require, exports: {}, id: '.', filename: '', loaded: true, children: [], paths: [] });
  const why = {
    env: ' (no environment variables)',
    exit: ' (an assertion cannot end the run)',
    cwd: ' (no file system)',
    argv: ' (no command line)',
  };
  // Node's `process`: every property is an error, but `mainModule`, which
  // promptfoo's own shim gives for `process.mainModule.require(…)`.
  const process = new Proxy(Object.create(null), {
    get(_, key) {
      if (typeof key === 'symbol') return undefined;
      if (key === 'mainModule') return mainModule;
      throw denied(`process.${key}`, why[key]);
    },
    has: () => false,
    set(_, key) {
      throw denied(`process.${String(key)}`, why[key]);
    },
  });
  const fetch = function fetch() {
    throw denied('fetch', ' (no network)');
  };

  const show = (value) => {
    if (typeof value === 'string') return value;
    try {
      const text = stringify(value);
      return text === undefined ? String(value) : text;
    } catch {
      return String(value);
    }
  };
  const line = (level) => (...args) => log(level, args.map(show).join(' '));
  const console = {
    log: line('info'),
    info: line('info'),
    debug: line('debug'),
    trace: line('trace'),
    warn: line('warn'),
    error: line('error'),
  };

  // Timers run in virtual time: when no promise job is left, the earliest
  // timer fires and the clock moves to its time. No time passes for real.
  const timers = [];
  let sequence = 0;
  let now = 0;
  const setTimeout = function setTimeout(callback, delay, ...args) {
    if (typeof callback !== 'function') throw new TypeError('setTimeout needs a function');
    const id = ++sequence;
    timers.push({ id, at: now + Math.max(0, Number(delay) || 0), callback, args });
    return id;
  };
  const clearTimeout = function clearTimeout(id) {
    const index = timers.findIndex((timer) => timer.id === id);
    if (index >= 0) timers.splice(index, 1);
  };
  const setImmediate = (callback, ...args) => setTimeout(callback, 0, ...args);
  const queueMicrotask = (callback) => {
    Promise.resolve().then(callback);
  };
  const earliest = () => {
    let found = -1;
    for (let i = 0; i < timers.length; i++) {
      const timer = timers[i];
      if (found < 0 || timer.at < timers[found].at || (timer.at === timers[found].at && timer.id < timers[found].id)) {
        found = i;
      }
    }
    return found;
  };

  // `Math.random()`: a fixed sequence (mulberry32 from a fixed seed), the
  // same in every context, so that a verdict does not depend on chance.
  let seed = 0x2545f491;
  Object.defineProperty(Math, 'random', {
    value: function random() {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
    writable: true,
    configurable: true,
    enumerable: false,
  });

  for (const [name, value] of Object.entries({
    require, process, fetch, console, setTimeout, clearTimeout, setImmediate, clearImmediate: clearTimeout,
    queueMicrotask,
  })) {
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  }

  // promptfoo's `isGradingResult`.
  const isGradingResult = (result) =>
    typeof result === 'object' && result !== null && typeof result.pass === 'boolean' &&
    typeof result.score === 'number' && typeof result.reason === 'string' &&
    (typeof result.namedScores === 'undefined' || typeof result.namedScores === 'object') &&
    (typeof result.namedScoreWeights === 'undefined' || typeof result.namedScoreWeights === 'object') &&
    (typeof result.tokensUsed === 'undefined' || typeof result.tokensUsed === 'object') &&
    (typeof result.componentResults === 'undefined' || Array.isArray(result.componentResults)) &&
    (typeof result.assertion === 'undefined' || result.assertion === null || typeof result.assertion === 'object') &&
    (typeof result.comment === 'undefined' || typeof result.comment === 'string');

  return {
    // `new Function('output', 'context', 'process', body)`.
    inline(body) {
      return new FunctionConstructor('output', 'context', 'process', body);
    },
    // The assertion's arguments after `output`: the context, with
    // `provider.id` a function as on promptfoo's provider objects.
    context(context) {
      const provider = context.provider;
      if (provider && typeof provider.id === 'string') {
        const id = provider.id;
        context.provider = { ...provider, id: () => id };
      }
      return context;
    },
    process,
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
    // promptfoo's `validateResult`, after the promise settled.
    validate(result) {
      if (typeof result === 'boolean' || typeof result === 'number' || isGradingResult(result)) return result;
      throw new Error(`Custom function must return a boolean, number, or GradingResult object. Got type ${typeof result}: ${stringify(result)}`);
    },
    // The time of the earliest timer, or -1 when there is none.
    nextTimer() {
      const index = earliest();
      return index < 0 ? -1 : timers[index].at;
    },
    // Fires the earliest timer.
    fireTimer() {
      const index = earliest();
      if (index < 0) return;
      const [timer] = timers.splice(index, 1);
      now = timer.at;
      timer.callback(...timer.args);
    },
  };
})
