// A small OpenAI-compatible server for the real-model bench, on llama.cpp as node-llama-cpp ships
// it prebuilt (nothing to compile). It serves POST /v1/chat/completions and GET /v1/models on
// 127.0.0.1, one request at a time, and honours what Custodian sends: `response_format`
// `json_schema` (as a grammar, as llama.cpp's server does), `temperature` and `max_tokens`; an
// answer cut off at `max_tokens` says `finish_reason: "length"`. It logs how long each request
// took to read its prompt and to answer; with LOG_ANSWERS=<file>, each answer is appended there.
//
// Outside the repository (npm 9 or later, Node 20):
//     mkdir -p /tmp/llm && cd /tmp/llm && npm init -y && npm i -E node-llama-cpp@3.21.1
//     cp <repo>/bench/local_server.mjs . && \
//       OMP_WAIT_POLICY=PASSIVE MODEL_PATH=/tmp/model.gguf PORT=8088 CTX_SIZE=16384 THREADS=1 \
//       nice -n 19 node local_server.mjs
// then `CUSTODIAN_BENCH_MODEL_URL=http://127.0.0.1:8088/v1 python bench/real_model.py`
// (docs/local-model.md). Not run by `make bench` or the tests.
import fs from "node:fs";
import http from "node:http";
import {getLlama, LlamaChat} from "node-llama-cpp";

const modelPath = process.env.MODEL_PATH;
const port = Number(process.env.PORT || 8080);
const ctxSize = Number(process.env.CTX_SIZE || 16384);
const threads = Number(process.env.THREADS || 1);
const answersTo = process.env.LOG_ANSWERS; // a file: each answer is appended to it, as one JSON line
const llama = await getLlama({gpu: false, build: "never", maxThreads: threads});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: ctxSize, threads, sequences: 1});
const sequence = context.getSequence();
const modelName = modelPath.split("/").pop();
let queue = Promise.resolve();
const log = (...a) => console.log(new Date().toISOString(), ...a);

async function complete(body) {
  const history = [];
  for (const m of body.messages || []) {
    const text = typeof m.content === "string" ? m.content : (m.content || []).map(p => p.text || "").join("");
    if (m.role === "system") history.push({type: "system", text});
    else if (m.role === "user") history.push({type: "user", text});
    else history.push({type: "model", response: [text]});
  }
  history.push({type: "model", response: []});
  const opts = {maxTokens: body.max_tokens || body.max_completion_tokens || 2048};
  if (body.temperature !== undefined) opts.temperature = body.temperature;
  const rf = body.response_format;
  let grammarNote = "none";
  if (rf && rf.type === "json_schema" && rf.json_schema && rf.json_schema.schema) {
    try { opts.grammar = await llama.createGrammarForJsonSchema(rf.json_schema.schema); grammarNote = "json_schema"; }
    catch (e) { log("schema not usable as grammar:", String(e).slice(0, 300)); opts.grammar = await llama.getGrammarFor("json"); grammarNote = "json"; }
  } else if (rf && rf.type === "json_object") { opts.grammar = await llama.getGrammarFor("json"); grammarNote = "json"; }
  const chat = new LlamaChat({contextSequence: sequence, autoDisposeSequence: false});
  const promptTokens = model.tokenize(history.map(h => h.text || "").join("\n")).length;
  const t0 = Date.now();
  let produced = 0, first = 0;
  opts.onTextChunk = (t) => { if (!first) { first = Date.now(); log(`prompt evaluated in ${((first-t0)/1000).toFixed(1)}s`); } produced += 1; if (produced % 200 === 0) log(`chunks ${produced}`); };
  log(`request prompt~${promptTokens} max_tokens=${opts.maxTokens} grammar=${grammarNote}`);
  const res = await chat.generateResponse(history, opts);
  chat.dispose({disposeSequence: false});
  const out = res.response;
  if (answersTo) fs.appendFileSync(answersTo, JSON.stringify({at: new Date().toISOString(), answer: out}) + "\n");
  const completionTokens = model.tokenize(out).length;
  log(`done grammar=${grammarNote} prompt~${promptTokens} out=${completionTokens} stop=${res.metadata.stopReason} ${((Date.now()-t0)/1000).toFixed(1)}s`);
  return {
    id: "chatcmpl-" + t0, object: "chat.completion", created: Math.floor(t0 / 1000), model: modelName,
    choices: [{index: 0, message: {role: "assistant", content: out},
               finish_reason: res.metadata.stopReason === "maxTokens" ? "length" : "stop"}],
    usage: {prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens},
  };
}

http.createServer((req, res) => {
  let data = "";
  req.on("data", c => data += c);
  req.on("end", () => {
    const send = (status, obj) => { res.writeHead(status, {"content-type": "application/json"}); res.end(JSON.stringify(obj)); };
    if (req.method === "GET" && req.url.endsWith("/models")) return send(200, {object: "list", data: [{id: modelName, object: "model"}]});
    if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) return send(404, {error: {message: "not found", type: "invalid_request_error"}});
    let body;
    try { body = JSON.parse(data); } catch { return send(400, {error: {message: "bad json", type: "invalid_request_error"}}); }
    queue = queue.then(() => complete(body).then(r => send(200, r), e => { log("error", e); send(500, {error: {message: String(e), type: "server_error"}}); }));
  });
}).listen(port, "127.0.0.1", () => log(`listening on 127.0.0.1:${port} model=${modelName} ctx=${ctxSize} threads=${threads}`));
