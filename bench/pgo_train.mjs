// The workload a profile-guided build learns from (scripts/build --pgo): the gateway built with
// -fprofile-generate serves, for a few seconds, the traffic its hot path is made of, and writes
// its profile when it exits. Billed chat completions, whole and streamed, with the benchmark's
// request (bench/chat_request.json), on keep-alive connections, against the tests' mock upstream,
// with a few model listings; nothing that fails. Code it never runs keeps its usual optimisation
// (-fprofile-partial-training), so the mix shapes the hot path's layout and inlining, not
// whether the rest works.
//   node bench/pgo_train.mjs BIN [SECONDS]   # BIN: an instrumented tollgate; 6 s by default
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMock } from '../tests/fixtures/mock_upstream.mjs';

const [bin, secondsArg] = process.argv.slice(2);
const seconds = Number(secondsArg ?? 6);
if (!bin || !(seconds > 0)) throw new Error('usage: pgo_train.mjs BIN [SECONDS]');
const here = path.dirname(fileURLToPath(import.meta.url));

const mock = await startMock();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-pgo-'));
const config = path.join(dir, 'tollgate.toml');
fs.writeFileSync(config, `[gateway]
listen = "127.0.0.1:0"
auth = "required"
workers = 1
[storage]
url = "sqlite://${dir}/tollgate.db"
[models.train_model]
input_cost_per_token = 0.00000015
output_cost_per_token = 0.0000006
routing = ["mock"]
[models.train_model.providers.mock]
type = "openai"
api_base = "${mock.url}"
model = "gpt-4o-mini"
api_key = "env::TRAIN_UPSTREAM_KEY"
`);
const env = { ...process.env, TRAIN_UPSTREAM_KEY: 'sk-train-0123456789abcdefghijklmnopqrstuvwxyz' };

const gateway = spawn(bin, ['serve', '--config', config], { env, stdio: ['ignore', 'pipe', 'pipe'] });
let stderr = ''; // Its last lines, for a failure's message: the access log has one a request.
gateway.stderr.on('data', (d) => { stderr = (stderr + d).slice(-4096); });
const exited = new Promise((resolve) => gateway.once('exit', (code, signal) => resolve({ code, signal })));
let stdout = '';
// What the gateway printed, for a failure's message, its first key masked.
const printed = () => `${stdout.replace(/sk-tollgate-\S+/g, '[redacted]')}${stderr}`;
function started() {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway did not start: ${printed()}`)), 30_000);
    gateway.stdout.on('data', (d) => {
      stdout += d;
      const port = stdout.match(/^tollgate listening on 127\.0\.0\.1:(\d+)$/m);
      const key = stdout.match(/^export TOLLGATE_API_KEY=(\S+)$/m);
      if (port && key) {
        clearTimeout(timer);
        resolve({ port: Number(port[1]), key: key[1] });
      }
    });
    exited.then(({ code, signal }) => reject(new Error(`the gateway exited (${code ?? signal}): ${printed()}`)));
  });
}

const whole = fs.readFileSync(path.join(here, 'chat_request.json'), 'utf8')
  .replace('"model":"gpt-4o-mini"', '"model":"train_model"');
const streamed = whole.replace('"stream":false', '"stream":true');
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

function send(at, method, route, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port: at.port, path: route, method, agent,
      headers: { authorization: `Bearer ${at.key}`, 'content-type': 'application/json' },
    }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${route}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

let sent = 0;
async function drive(at) {
  const until = Date.now() + seconds * 1000;
  const client = async () => {
    while (Date.now() < until) {
      const n = sent++;
      if (n % 50 === 0) await send(at, 'GET', '/v1/models');
      else await send(at, 'POST', '/v1/chat/completions', n % 4 === 0 ? streamed : whole);
    }
  };
  await Promise.all(Array.from({ length: 16 }, client));
}

let failure = null;
try {
  const at = await started();
  execFileSync(bin, ['admin', '--config', config, 'teams', 'topup', 'default', '1000000'], { env, stdio: 'ignore' });
  await drive(at);
} catch (err) {
  failure = err;
}
agent.destroy();
gateway.kill('SIGTERM'); // The profile is written as the process exits.
const { code, signal } = await exited;
await mock.close();
fs.rmSync(dir, { recursive: true, force: true });
if (failure) throw failure;
if (code !== 0) throw new Error(`the gateway exited with ${code ?? signal}: ${stderr}`);
console.log(`pgo_train: ${sent} requests in ${seconds} s`);
