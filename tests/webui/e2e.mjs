// SPDX-License-Identifier: Apache-2.0
// The web UI end to end in a real browser (Debian's Chromium, driven by playwright-core)
// against a running server:
//
//   NODE_PATH=build/webui-e2e/node_modules node tests/webui/e2e.mjs \
//     http://127.0.0.1:8000 tests/data/corpus/x.pdf build/test-artifacts/webui.png
//
// Options: --min-boxes N (layout boxes that must be drawn, default 1), --timeout-s S (for the
// whole parse, default 600), --chromium PATH (default $MINERU_CHROMIUM or /usr/bin/chromium),
// --api-key KEY (the server wants this key: the UI must ask for it once, send it on every API
// request, previews, event streams and the ZIP download included, and never put it in a URL).
//
// It drops the PDF on the drop zone, waits for the task to complete, and checks: page progress
// was shown; the rendered Markdown pane has content; layout boxes are drawn over a loaded page
// preview; the Markdown and JSON tabs show text (the JSON parses); the ZIP link answers 200 with
// a ZIP; a chat question about page 1 is answered as an event stream; every answer of the server
// carries the Content-Security-Policy of the UI, and the browser logged no error (a CSP
// violation, a failed load or an uncaught exception is one). It saves full-page screenshots,
// also when a check failed. Exit status 0 when every check passed, 1 otherwise.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname } from 'node:path';

// playwright-core is CommonJS; require() honours NODE_PATH (ES module imports do not).
const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

function parseArgs(argv) {
  const positional = [];
  const options = { minBoxes: 1, timeoutS: 600, chromium: process.env.MINERU_CHROMIUM };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--min-boxes') options.minBoxes = Number(argv[++i]);
    else if (a === '--timeout-s') options.timeoutS = Number(argv[++i]);
    else if (a === '--chromium') options.chromium = argv[++i];
    else if (a === '--api-key') options.apiKey = argv[++i];
    else positional.push(a);
  }
  if (positional.length !== 3 || !(options.minBoxes >= 0) || !(options.timeoutS > 0)) {
    console.error(
      'usage: e2e.mjs <base-url> <pdf> <screenshot.png> [--min-boxes N] [--timeout-s S] ' +
        '[--chromium PATH] [--api-key KEY]',
    );
    process.exit(2);
  }
  const [baseUrl, pdf, screenshot] = positional;
  return { baseUrl: baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`, pdf, screenshot, ...options };
}

const args = parseArgs(process.argv.slice(2));
const failures = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
  return ok;
};

const browser = await chromium.launch({
  executablePath: args.chromium || '/usr/bin/chromium',
  // Chromium's sandbox cannot start as root (containers, CI).
  args: process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [],
});
try {
  await run();
} catch (err) {
  failures.push(String(err && err.stack ? err.stack : err));
  console.error(err);
} finally {
  await browser.close();
}
if (failures.length > 0) {
  console.error(`\n${failures.length} check(s) failed:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
console.log('\nall checks passed');

async function run() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  try {
    await checkUi(page);
  } finally {
    await screenshots(page).catch((err) => console.error(`no screenshot: ${err.message}`));
  }
}

async function checkUi(page) {

  const browserErrors = [];
  page.on('console', (msg) => {
    // With a key, the requests before the key was entered are refused: that is expected.
    if (args.apiKey && /status of 401/.test(msg.text())) return;
    if (msg.type() === 'error') browserErrors.push(`console: ${msg.text()}`);
  });
  // With a key: which API requests carried it, and whether any URL did.
  const apiRequests = { total: 0, withKey: 0, keyInUrl: [] };
  page.on('request', (req) => {
    const path = new URL(req.url()).pathname;
    if (args.apiKey && req.url().includes(args.apiKey)) apiRequests.keyInUrl.push(req.url());
    if (!path.includes('/v1/')) return;
    apiRequests.total += 1;
    if ((req.headers().authorization || '') === `Bearer ${args.apiKey}`) apiRequests.withKey += 1;
  });
  page.on('pageerror', (err) => browserErrors.push(`uncaught: ${err.message}`));
  page.on('requestfailed', (req) => {
    // A stream the UI itself closes (EventSource after "done") is not a failure.
    const reason = req.failure() ? req.failure().errorText : '';
    if (!/ERR_ABORTED/.test(reason)) browserErrors.push(`request failed: ${req.url()} ${reason}`);
  });
  const uiWithoutCsp = [];
  page.on('response', (res) => {
    const path = new URL(res.url()).pathname;
    const isUi = path === new URL(args.baseUrl).pathname || path.includes('/ui/');
    if (isUi && !res.headers()['content-security-policy']) uiWithoutCsp.push(path);
  });

  // ---- The page and its policy.
  const first = await page.goto(args.baseUrl);
  check(first && first.status() === 200, `GET / answers 200 (${first && first.status()})`);
  const csp = (first && first.headers()['content-security-policy']) || '';
  check(/default-src 'self'/.test(csp) && /script-src 'self'/.test(csp), `CSP on /: ${csp}`);
  await page.locator('#drop-zone').waitFor();
  if (args.apiKey) {
    // The header's /v1/models is refused: the UI asks for the key.
    await page.locator('#key-dialog').waitFor({ state: 'visible' });
    check(true, 'the UI asks for the API key');
    await page.fill('#key-input', args.apiKey);
    await page.click('#key-dialog button[type="submit"]');
    await page.locator('#key-dialog').waitFor({ state: 'hidden' });
    await page.locator('#server-model').waitFor({ state: 'visible' });
    check(true, 'with the key the header names the model');
  }

  // ---- Upload by drag and drop.
  const bytes = readFileSync(args.pdf);
  const dataTransfer = await page.evaluateHandle(
    ({ name, b64 }) => {
      const raw = atob(b64);
      const data = new Uint8Array(raw.length);
      for (let i = 0; i < raw.length; i++) data[i] = raw.charCodeAt(i);
      const dt = new DataTransfer();
      dt.items.add(new File([data], name, { type: 'application/pdf' }));
      return dt;
    },
    { name: basename(args.pdf), b64: bytes.toString('base64') },
  );
  await page.dispatchEvent('#drop-zone', 'dragenter', { dataTransfer });
  await page.dispatchEvent('#drop-zone', 'drop', { dataTransfer });
  console.log(`dropped ${args.pdf} (${bytes.length} bytes); waiting for the result`);

  await page.locator('#progress-box').waitFor({ state: 'visible' });
  const outcome = await Promise.race([
    page.locator('#result').waitFor({ state: 'visible', timeout: args.timeoutS * 1000 })
      .then(() => 'result'),
    page.locator('#error').waitFor({ state: 'visible', timeout: args.timeoutS * 1000 })
      .then(() => 'error'),
  ]);
  if (outcome === 'error') {
    throw new Error(`the UI reported: ${await page.locator('#error').textContent()}`);
  }
  const pagesTotal = await page.locator('#page-progress li').count();
  const pagesDone = await page.locator('#page-progress li.done').count();
  check(pagesTotal > 0 && pagesDone === pagesTotal,
    `progress per page shown (${pagesDone} of ${pagesTotal} done)`);
  check(/Done/.test(await page.locator('#status').textContent()), 'status says done');

  // ---- Rendered Markdown.
  const rendered = (await page.locator('#panel-rendered').innerText()).trim();
  check(rendered.length > 0, `rendered Markdown has content (${rendered.length} characters)`);
  const formulas = await page.locator('#panel-rendered .math').count();
  const katexDone = await page.locator('#panel-rendered .katex, #panel-rendered .math-error')
    .count();
  check(katexDone >= formulas, `every formula placeholder rendered (${formulas})`);

  // ---- Pages with layout boxes.
  await page.click('#tab-pages');
  const firstPreview = page.locator('#pages .page-frame img').first();
  await firstPreview.waitFor();
  await firstPreview.scrollIntoViewIfNeeded();
  await page.waitForFunction(
    () => {
      const img = document.querySelector('#pages .page-frame img');
      return img && img.complete && img.naturalWidth > 0;
    },
    null,
    { timeout: 60_000 },
  );
  const boxes = await page.locator('#pages .layout-box').count();
  check(boxes >= args.minBoxes, `layout boxes drawn over the previews (${boxes})`);
  if (boxes > 0) {
    const box = await page.locator('#pages .layout-box').first().boundingBox();
    const frame = await page.locator('#pages .page-frame').first().boundingBox();
    check(box && box.width > 0 && box.height > 0, 'a layout box has a size on screen');
    check(frame && frame.height > 100, `the first preview is shown (${frame && frame.height}px)`);
    const legend = await page.locator('#legend li').count();
    check(legend > 0, `legend lists the block types (${legend})`);
  }

  // ---- Markdown and JSON tabs.
  await page.click('#tab-markdown');
  const markdown = await page.locator('#markdown-raw').textContent();
  check(markdown.trim().length > 0, `Markdown tab shows text (${markdown.length} characters)`);
  await page.click('#tab-json');
  for (const which of ['middle_json', 'content_list', 'model_json']) {
    await page.selectOption('#json-select', which);
    const text = await page.locator('#json-raw').textContent();
    let parses = false;
    try {
      JSON.parse(text);
      parses = true;
    } catch {
      parses = false;
    }
    check(text.trim().length > 2 && parses, `JSON tab shows ${which} (${text.length} characters)`);
  }

  // ---- ZIP download.
  const zipHref = await page.locator('#zip-link').getAttribute('href');
  const zip = await page.request.get(new URL(zipHref, args.baseUrl).href, {
    headers: args.apiKey ? { Authorization: `Bearer ${args.apiKey}` } : {},
  });
  const zipBody = await zip.body();
  check(zip.status() === 200 && zipBody.subarray(0, 2).toString() === 'PK',
    `ZIP link answers 200 with a ZIP (${zip.status()}, ${zipBody.length} bytes)`);
  if (args.apiKey) {
    // The link itself, clicked: fetched with the key and saved from a blob: URL.
    await page.click('#tab-rendered');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('#zip-link'),
    ]);
    const saved = readFileSync(await download.path());
    check(saved.subarray(0, 2).toString() === 'PK',
      `the ZIP link downloads a ZIP with the key (${download.suggestedFilename()}, ` +
        `${saved.length} bytes)`);
  }

  // ---- Chat about page 1, streamed.
  await page.click('#tab-pages');
  await page.locator('#pages figcaption .link-button').first().click();
  check((await page.locator('#chat-page').inputValue()) === '0', 'chat picks page 1');
  await page.fill('#chat-question', 'What is the title of this page?');
  const chatResponse = page.waitForResponse((r) => r.url().includes('/v1/chat/completions'));
  await page.click('#chat-send');
  const chat = await chatResponse;
  check(chat.status() === 200, `chat answers 200 (${chat.status()})`);
  check(/text\/event-stream/.test(chat.headers()['content-type'] || ''),
    `chat answer is an event stream (${chat.headers()['content-type']})`);
  await page.locator('#chat-send:not([disabled])').waitFor({ timeout: args.timeoutS * 1000 });
  const answer = (await page.locator('.chat-answer .chat-text').last().textContent()).trim();
  const chatError = await page.locator('.chat-answer .chat-error').count();
  check(chatError === 0 && answer.length > 0 && answer !== '(empty answer)',
    `chat streamed an answer (${answer.length} characters)`);

  // ---- The key: on every API request after it was entered, in no URL.
  if (args.apiKey) {
    check(apiRequests.keyInUrl.length === 0,
      `the key is in no URL${apiRequests.keyInUrl.length ? `: ${apiRequests.keyInUrl[0]}` : ''}`);
    // Only the first /v1/models went without it.
    check(apiRequests.total > 5 && apiRequests.withKey === apiRequests.total - 1,
      `API requests carried the key (${apiRequests.withKey} of ${apiRequests.total})`);
  }

  // ---- Policy and browser errors over the whole session.
  check(uiWithoutCsp.length === 0, `every UI answer carries the CSP (${uiWithoutCsp.join(', ')})`);
  check(browserErrors.length === 0, `no browser errors${browserErrors.length ? ':\n  ' : ''}` +
    browserErrors.join('\n  '));

}

// The full page with the Rendered tab at <screenshot>, and with the Pages tab (the layout boxes)
// next to it at <screenshot minus .png>-pages.png; also after a failure, to show what went wrong.
async function screenshots(page) {
  mkdirSync(dirname(args.screenshot), { recursive: true });
  const pagesShot = args.screenshot.replace(/(\.png)?$/i, '-pages.png');
  if (await page.locator('#result').isVisible()) {
    await page.click('#tab-pages');
    await page.screenshot({ path: pagesShot, fullPage: true });
    await page.click('#tab-rendered');
  }
  await page.screenshot({ path: args.screenshot, fullPage: true });
  console.log(`screenshot: ${args.screenshot}`);
}
