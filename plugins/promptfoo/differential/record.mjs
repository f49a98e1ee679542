// Records promptfoo's own verdicts for the differential test: every case
// below, for every assertion type and its `not-` form, through promptfoo's
// exported `assertions.runAssertion`, with the judge and embeddings types
// graded by the deterministic server in ./server.mjs.
//
// Run (see README.md):
//   npm install --prefix ~/.cache/assay/promptfoo-0.123.1 promptfoo@0.123.1
//   NODE_PATH=~/.cache/assay/promptfoo-0.123.1/node_modules node plugins/promptfoo/differential/record.mjs
// which writes ./recorded.jsonl (a header line, then one line per case).
import fs from 'node:fs';
import path from 'node:path';
import { start } from './server.mjs';

process.env.PROMPTFOO_CACHE_ENABLED = 'false';
process.env.PROMPTFOO_DISABLE_TELEMETRY = '1';
process.env.PROMPTFOO_DISABLE_UPDATE = '1';
process.env.OPENAI_API_KEY = 'differential';

const modules = (process.env.NODE_PATH || '').split(':')[0];
if (!modules) throw new Error('set NODE_PATH to the node_modules promptfoo is installed in');
const promptfooDir = path.join(modules, 'promptfoo');
const { version } = JSON.parse(fs.readFileSync(path.join(promptfooDir, 'package.json'), 'utf8'));
const promptfoo = (await import(path.join(promptfooDir, 'dist/src/index.js'))).default;
const { assertions } = promptfoo;
const { loadApiProvider } = await import(path.join(promptfooDir, 'dist/src/index.js'));

const COMMAND = 'NODE_PATH=~/.cache/assay/promptfoo-0.123.1/node_modules node plugins/promptfoo/differential/record.mjs';
const server = await start(0);
const base = `http://127.0.0.1:${server.address().port}/v1`;
const config = { apiBaseUrl: base, apiKey: 'differential' };
const options = {
  provider: {
    text: { id: 'openai:chat:judge', config },
    embedding: { id: 'openai:embedding:embedder', config },
  },
};

// A rubric answer the judge gives back verbatim.
const reply = (text) => `REPLY<<${text}>>`;
const PROMPT = 'What is the capital of France?';

// [type, output, expected] — expected is assay's object form: value,
// threshold, prompt, rubric_prompt, conversation, window_size (absent keys
// left out).
const cases = [];
const add = (type, output, expected) => cases.push([type, output, expected]);

for (const [output, value] of [
  ['Hello world', 'Hello world'],
  ['Hello world', 'hello world'],
  ['', ''],
  ['', 'x'],
  ['héllo ✓', 'héllo ✓'],
  ['42', 42],
  ['true', true],
  ['{"a": 1, "b": [1, 2]}', { b: [1, 2.0], a: 1 }],
  ['{"a": 1}', { a: 2 }],
  ['not json', { a: 1 }],
  ['[1,2]', [1, 2]],
  ['null', null],
]) add('equals', output, value === null ? {} : { value });

for (const type of ['contains', 'icontains']) {
  for (const [output, value] of [
    ['The answer is Paris', 'Paris'],
    ['The answer is Paris', 'paris'],
    ['THE ANSWER IS PARIS', 'paris'],
    ['', 'x'],
    ['İstanbul ŞEHİR', 'şehir'],
    ['Größe STRASSE', 'straße'],
    ['emoji 😀 here', '😀'],
    ['answer 42', 42],
    ['anything', ''],
    ['anything', undefined],
  ]) add(type, output, value === undefined ? {} : { value });
}

for (const type of ['contains-any', 'contains-all', 'icontains-any', 'icontains-all']) {
  for (const [output, value] of [
    ['red green blue', ['red', 'yellow']],
    ['red green blue', ['red', 'green']],
    ['RED green', ['red', 'GREEN']],
    ['red green blue', 'red, yellow'],
    ['a, b and c', '"a, b", c'],
    ['say "hi" there', '"say ""hi""", there'],
    ['', ['x']],
    ['anything', []],
    ['Ünïcödé ß', ['ünïcödé', 'SS']],
    ['n 1 and 2', [1, 3]],
    ['anything', ''],
    ['anything', '"unterminated'],
  ]) add(type, output, { value });
}

for (const [output, value] of [
  ['Hello world', 'Hello'],
  ['Hello world', 'hello'],
  ['', 'x'],
  ['😀 smile', '😀'],
  ['anything', ''],
]) add('starts-with', output, { value });

for (const [output, value] of [
  ['Order 12345 shipped', '\\d{5}'],
  ['Order shipped', '\\d{5}'],
  ['abc', '^ABC$'],
  ['line1\nline2', '^line2$'],
  ['', '^$'],
  ['naïve café', 'caf\\u00e9'],
  ['aaa', '(?<=a)a'],
  ['x', '(unclosed'],
  ['x', ''],
]) add('regex', output, { value });

const personSchema = { type: 'object', required: ['name'], properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } } };
for (const [output, value] of [
  ['{"name": "Ada", "age": 36}', undefined],
  ['[1, 2, 3]', undefined],
  ['"just a string"', undefined],
  ['not json', undefined],
  ['', undefined],
  ['{"name": "Ada", "age": 36}', personSchema],
  ['{"age": 36}', personSchema],
  ['{"name": "Ada", "age": -1}', personSchema],
  ['{"name": "Ada"}', JSON.stringify(personSchema)],
  ['{"name": "Ada", "tags": ["a", "a"]}', { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' }, uniqueItems: true } } }],
  ['{"kind": "b"}', { type: 'object', properties: { kind: { enum: ['a', 'b'] } }, additionalProperties: false }],
  ['{"kind": "b", "x": 1}', { type: 'object', properties: { kind: { enum: ['a', 'b'] } }, additionalProperties: false }],
]) add('is-json', output, value === undefined ? {} : { value });

for (const [output, value] of [
  ['Here you go: {"name": "Ada"} done', undefined],
  ['No JSON here', undefined],
  ['Two: {"a": 1} and {"name": "Bo"}', personSchema],
  ['Only {"a": 1}', personSchema],
  ['Unclosed {"name": "Ada"', undefined],
  ['Nested {"outer": {"name": "x"}} end', undefined],
  ['', undefined],
  ['braces {not json} then {"name": "Cy"}', personSchema],
]) add('contains-json', output, value === undefined ? {} : { value });

const call = (name, args) => ({ id: 'call_1', type: 'function', function: { name, arguments: args } });
for (const output of [
  [call('get_weather', '{"city": "Paris"}')],
  [call('get_weather', '{"city": "Paris"}'), call('get_time', '{}')],
  [],
  [{ id: 'x', type: 'function', function: { name: 'get_weather' } }],
  { tool_calls: [call('get_time', '{}')] },
  'plain text',
]) add('is-valid-openai-tools-call', typeof output === 'string' ? output : JSON.stringify(output), {});

for (const [output, value, threshold] of [
  ['kitten', 'sitting', undefined],
  ['kitten', 'sitting', 2],
  ['', 'abcdef', undefined],
  ['', '', 0],
  ['a😀b', 'ab', 1],
  ['a😀b', 'ab', 2],
  ['Hello', 'hello', 0],
  ['anything', 'x', -1],
]) add('levenshtein', output, threshold === undefined ? { value } : { value, threshold });

for (const [output, value, threshold] of [
  ['The cat sat on the mat.', 'The cat sat on the mat.', undefined],
  ['the cat sat on', 'The cat sat', undefined],
  ['A dog ran in the park', 'The cat sat on the mat', undefined],
  ['', 'anything', undefined],
  ['I can\'t believe it\'s not butter!', 'I cannot believe it is not butter', 0.3],
  ['He said "hello" (twice) -- then left...', 'he said hello twice then left', 0.5],
  ['Le café coûte 3,50 €; très cher?', 'le café coûte 3,50 €', 0.5],
  ['The THE the', 'the', 0.1],
  ['x', 'x', 1.5],
]) add('rouge-n', output, threshold === undefined ? { value } : { value, threshold });

for (const [output, value, threshold] of [
  ['the cat is on the mat', 'the cat is on the mat', undefined],
  ['the cat sat on the mat today', 'the cat is on the mat', undefined],
  ['the cat', 'the cat is on the mat', 0.01],
  ['', 'reference', undefined],
  ['a b c d e', ['a b c d e f', 'x y z'], undefined],
  ['Über   Straße  ', 'über straße', 0.1],
  ['one two three four five six', 'six five four three two one', 0.2],
  ['x', 'x', -0.5],
]) add('bleu', output, threshold === undefined ? { value } : { value, threshold });

for (const [output, value, threshold] of [
  ['the quick brown fox', 'the quick brown fox', undefined],
  ['the quick brown fox', 'a lazy dog sleeps', undefined],
  ['abc', 'abd', 0.6],
  ['abc', ['zzz', 'abc'], undefined],
  ['abc', ['zzz', 'yyy'], 0.9],
  ['héllo', 'hello', 0.5],
  ['', 'hello', undefined],
]) add('similar', output, threshold === undefined ? { value } : { value, threshold });

for (const [output, value, threshold] of [
  ['Paris ' + reply('{"reason": "right", "pass": true, "score": 1}'), 'names the capital', undefined],
  ['Lyon ' + reply('{"reason": "wrong", "pass": false, "score": 0}'), 'names the capital', undefined],
  ['Paris ' + reply('{"pass": true, "score": 0.6}'), 'names the capital', 0.7],
  ['Paris ' + reply('{"pass": true, "score": 0.8}'), 'names the capital', 0.7],
  ['Paris ' + reply('{"pass": "yes", "score": "0.25"}'), 'names the capital', undefined],
  ['Paris ' + reply('{"reason": "no pass field"}'), 'names the capital', undefined],
  ['Paris ' + reply('{"pass": false}'), 'names the capital', undefined],
  ['Paris ' + reply('not json at all'), 'names the capital', undefined],
  ['Paris ' + reply('{"pass": true, "score": 1.7}'), 'names the capital', undefined],
  ['', 'is empty ' + reply('{"pass": true, "score": 0.5}'), undefined],
  ['{"answer": "Paris"} ' + reply('{"pass": true}'), 'names the capital', undefined],
  ['Paris ' + reply('{"pass": true, "score": 1}'), undefined, undefined],
]) add('llm-rubric', output, Object.fromEntries(Object.entries({ value, threshold }).filter(([, v]) => v !== undefined)));

for (const [output, value] of [
  ['Paris ' + reply('Reasoning: it names Paris.\nY\nY'), 'names the capital'],
  ['Lyon ' + reply('Reasoning: wrong city.\nN\nN'), 'names the capital'],
  ['Paris ' + reply('I am unsure'), 'names the capital'],
  ['Paris ' + reply('Y  \n '), 'names the capital'],
]) add('model-graded-closedqa', output, { value, prompt: PROMPT });

for (const [output, value] of [
  ['Paris ' + reply('{"category": "C", "reason": "same"}'), 'Paris'],
  ['Lyon ' + reply('{"category": "D", "reason": "disagree"}'), 'Paris'],
  ['Paris is big ' + reply('{"category": "b"}'), 'Paris'],
  ['Paris ' + reply('{"category": "Z"}'), 'Paris'],
  ['Paris ' + reply('The answer is (A) because it is a subset'), 'Paris'],
  ['Paris ' + reply('no category here'), 'Paris'],
]) add('factuality', output, { value, prompt: PROMPT });

// g-eval: the criterion holds the judge's answer to both of its prompts
// (the steps, then the score out of ten).
const steps = (score) => reply(`{"steps":["a","b"],"score":${score},"reason":"r${score}"}`);
for (const [value, threshold] of [
  ['good ' + steps(7), undefined],
  ['good ' + steps(7), 0.8],
  ['good ' + steps('"9"'), undefined],
  ['too much ' + steps(11), undefined],
  ['no steps ' + reply('{"steps":[]}'), undefined],
  ['not json ' + reply('no json'), undefined],
  [['first ' + steps(9), 'second ' + steps(5)], undefined],
  [['first ' + steps(9), 'second ' + reply('nothing')], undefined],
]) add('g-eval', 'Paris', { value, prompt: PROMPT, ...(threshold === undefined ? {} : { threshold }) });

// conversation-relevance: the judge's answer is read from its verdict
// prompt, where the conversation is JSON (a marker in it is escaped, so
// these are promptfoo's grader failures).
add('conversation-relevance', 'Paris', { prompt: PROMPT });
add('conversation-relevance', 'Paris ' + reply('{"verdict": "yes"}'), { prompt: PROMPT, threshold: 0.5 });
add('conversation-relevance', 'Paris', {
  prompt: PROMPT,
  conversation: [{ input: 'hi', output: 'hello' }, { input: 'capital?', output: { city: 'Paris' } }],
  window_size: 1,
});

// The retrieval types: the judge's answers sit in the output (answer-
// relevance's questions, context-faithfulness's statements), the expected
// answer (context-recall's classifications), the query (context-
// relevance's quotes) or the context (context-faithfulness's verdicts).
const QUERY = 'What is the capital of France?';
for (const [output, extra] of [
  ['Paris ' + reply(QUERY), { query: QUERY, threshold: 0.9 }],
  ['Paris ' + reply('Which city is the capital of France?'), { query: QUERY }],
  ['Paris ' + reply('Where is Lyon?'), {}],
  ['Paris', { query: QUERY }],
  [reply(''), { query: QUERY }],
]) add('answer-relevance', output, { prompt: PROMPT, ...extra });
const classified = reply('1. Paris is the capital. So [Attributed]\n2. It is big. So [Not Attributed]\n3. It has a tower. [attributed]');
for (const [value, extra] of [
  [classified, { context: 'Paris is the capital of France.' }],
  [classified, { context: ['Paris is the capital.', 'It has a tower.'], threshold: 0.7 }],
  [classified, {}],
  [reply('1. Paris. So [Attributed]\n\n2. Lyon. So [Attributed] [Not Attributed]'), { context: 'c', threshold: 0.5 }],
  [reply('nothing classified here'), { context: 'Paris is the capital of France.' }],
  [classified, { context: '' }],
]) add('context-recall', 'Paris', { value, prompt: PROMPT, ...extra });
for (const [query, context, threshold] of [
  [QUERY + ' ' + reply('Paris is the capital.'), 'Paris is the capital. Lyon is big! Nice is sunny?', undefined],
  [QUERY + ' ' + reply('Paris is the capital.'), 'Paris is the capital. Lyon is big.', 0.6],
  [QUERY + ' ' + reply('1. Paris is the capital.\n2. Lyon is big.\n2. Lyon is big.'), 'Paris is the capital.\nLyon is big.\nNice is sunny.', undefined],
  [QUERY + ' ' + reply('Paris is the capital.'), ['Paris is the capital.', 'Lyon is big.', ' '], undefined],
  [QUERY + ' ' + reply('Insufficient Information'), 'Paris is the capital.', undefined],
  [QUERY + ' ' + reply('Berlin is the capital.'), 'Paris is the capital.', undefined],
  [QUERY + ' ' + reply('Paris is the capital.'), undefined, undefined],
  [undefined, 'Paris is the capital.', undefined],
]) add('context-relevance', 'Paris', { prompt: PROMPT, ...(query === undefined ? {} : { query }), ...(context === undefined ? {} : { context }), ...(threshold === undefined ? {} : { threshold }) });
const statements = 'Paris ' + reply('Paris is the capital.\nParis is big.\n\nParis has a tower.');
for (const [output, context, threshold] of [
  [statements, 'Paris is the capital. ' + reply('Final verdict for each statement in order: Yes. No. Yes.'), undefined],
  [statements, 'Paris is the capital. ' + reply('Final verdict for each statement in order: Yes.'), 0.3],
  [statements, reply('Explanation: it says so. Verdict: Yes.\nVerdict: NO.\nVerdict: yes'), 0.6],
  [statements, reply('I cannot tell'), undefined],
  [statements, reply('Final verdict for each statement in order: maybe. Yes.'), undefined],
  [reply(''), 'Paris is the capital.', undefined],
  [statements, undefined, undefined],
]) add('context-faithfulness', output, { prompt: PROMPT, query: QUERY, ...(context === undefined ? {} : { context }), ...(threshold === undefined ? {} : { threshold }) });
add('context-faithfulness', statements, { prompt: PROMPT, context: 'Paris. ' + reply('Verdict: yes') });

// is-valid-openai-function-call: the output as the openai provider gives
// it (an object for a call, text otherwise; assay's answers say which) and
// the provider's functions.
const weather = [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
for (const [output, functions] of [
  [{ name: 'get_weather', arguments: '{"city": "Paris"}' }, weather],
  [{ function_call: { name: 'get_weather', arguments: '{"city": "Paris"}' } }, weather],
  [{ name: 'get_weather', arguments: '{"city": 3}' }, weather],
  [{ name: 'get_weather', arguments: '{}' }, weather],
  [{ name: 'get_time', arguments: '{}' }, weather],
  [{ name: 'get_weather' }, weather],
  ['{"name": "get_weather", "arguments": "{}"}', weather],
  [{ name: 'get_weather', arguments: '{"city": "Paris"}' }, undefined],
  [{ name: 'get_weather', arguments: '{"city": "Paris"}' }, false],
]) add('is-valid-openai-function-call', output, { functions });

for (const [latency, threshold] of [[120, 500], [800, 500], [500, 500], [0, 0]]) add('latency', latency, { threshold });
for (const [cost, threshold] of [[0.002, 0.01], [0.05, 0.01], [0.01, 0.01]]) add('cost', cost, { threshold });

// promptfoo's result for one assertion: pass and score, or the error.
async function run(type, output, expected) {
  const assertion = { type, ...('value' in expected ? { value: expected.value } : {}), ...('threshold' in expected ? { threshold: expected.threshold } : {}) };
  const baseType = type.replace(/^not-/, '');
  let providerOutput = output;
  let provider;
  if (baseType === 'is-valid-openai-function-call') {
    // `false`: a provider that cannot check calls (not openai).
    provider = expected.functions === false
      ? { id: () => 'echo', config: {} }
      : await loadApiProvider('openai:chat:differential', { options: { config: { ...config, functions: expected.functions } } });
  }
  if (baseType === 'is-valid-openai-tools-call') {
    try { providerOutput = JSON.parse(output); } catch { providerOutput = output; }
    const functions = ['get_weather', 'get_time'].map((name) => ({ type: 'function', function: { name, parameters: { type: 'object' } } }));
    provider = { id: () => 'differential', config: { tools: functions } };
  }
  if (expected.window_size !== undefined) assertion.config = { windowSize: expected.window_size };
  const params = {
    assertion,
    test: {
      vars: {
        ...(expected.conversation ? { _conversation: expected.conversation } : {}),
        ...('query' in expected ? { query: expected.query } : {}),
        ...('context' in expected ? { context: expected.context } : {}),
      },
      options,
    },
    prompt: expected.prompt,
    provider,
    providerResponse: baseType === 'latency' || baseType === 'cost' ? { output: 'x', cost: baseType === 'cost' ? output : undefined } : { output: providerOutput },
    latencyMs: baseType === 'latency' ? output : undefined,
  };
  try {
    const result = await assertions.runAssertion(params);
    return { pass: result.pass, score: result.score };
  } catch (error) {
    return { error: String(error.message || error).split('\n')[0] };
  }
}

// promptfoo logs to stdout, so the recording is written to its own file.
const lines = [JSON.stringify({ promptfoo: version, node: process.version, command: COMMAND })];
for (const [type, output, expected] of cases) {
  const direct = await run(type, output, expected);
  const negated = await run(`not-${type}`, output, expected);
  lines.push(JSON.stringify({ type, output, expected, direct, negated }));
}
server.close();
fs.writeFileSync(new URL('./recorded.jsonl', import.meta.url), lines.join('\n') + '\n');
console.error(`recorded ${cases.length} cases with promptfoo ${version}`);
