// SPDX-License-Identifier: Apache-2.0
// The web UI on a MinerU2.5-Pro result in a real browser (Debian's Chromium, driven by
// playwright-core), without a server: the browser's requests are answered from the sources
// (web/src and the built libraries, with the UI's Content-Security-Policy read from
// src/service/web_ui.h) and from a scripted API whose task result is fixtures/pro_result.json
// (MinerU 3.4.4's outputs: middle.json with chart groups, sub-images and merged-away blocks,
// Markdown with <details> image analysis, a chart's table, a flowchart's Mermaid and hostile
// analysis text).
//
//   NODE_PATH=build/webui-e2e/node_modules node tests/webui/render_test.mjs \
//     --vendor build/web-vendor/node_modules [--screenshot build/test-artifacts/webui-pro.png]
//     [--chromium PATH]
//
// It checks: the header names the Pro profile; the Rendered view shows each analysis as a
// <details> under its image, the chart's table as a table, the Mermaid source as code (and
// nothing drawn from it), formulas in table cells and in the algorithm; nothing of the hostile
// text runs or survives as markup; the Pages view draws model.json's boxes and, switched to
// middle.json, chart bodies, dashed merged-away blocks and dotted sub-images, with the legend;
// the JSON view offers content_list_v2; the sanitiser on its own (markdownToSafeHtml) keeps
// <details>/<summary> and drops every script vector; and the browser logged no error and no
// policy violation. Prints "N passed, N failed"; exit status 0 when all passed.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const webSrc = join(root, 'web', 'src');
const BASE = 'http://mineru.test/';

function parseArgs(argv) {
  const options = { chromium: process.env.MINERU_CHROMIUM || '/usr/bin/chromium' };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--vendor') options.vendor = argv[++i];
    else if (argv[i] === '--screenshot') options.screenshot = argv[++i];
    else if (argv[i] === '--chromium') options.chromium = argv[++i];
    else options.bad = true;
  }
  if (options.bad || !options.vendor) {
    console.error('usage: render_test.mjs --vendor NODE_MODULES [--screenshot PNG] ' +
      '[--chromium PATH]');
    process.exit(2);
  }
  return options;
}
const args = parseArgs(process.argv.slice(2));

// The policy the server sends: the string literals of kWebUiContentSecurityPolicy.
function serverPolicy() {
  const header = readFileSync(join(root, 'src', 'service', 'web_ui.h'), 'utf8');
  const m = /kWebUiContentSecurityPolicy\s*=([\s\S]*?);\n/.exec(header);
  if (!m) throw new Error('no kWebUiContentSecurityPolicy in src/service/web_ui.h');
  return [...m[1].matchAll(/"([^"]*)"/g)].map((x) => x[1]).join('');
}
const CSP = serverPolicy();

const fixture = JSON.parse(readFileSync(join(here, 'fixtures', 'pro_result.json'), 'utf8'));
const TASK = fixture.task_id;
const doc = fixture.documents[0];
const pageCount = doc.model_json.length;

// served path -> [file, content type], as cmake/WebUi.cmake embeds them.
const VENDOR = {
  'ui/vendor/marked.esm.js': 'marked/lib/marked.esm.js',
  'ui/vendor/katex.mjs': 'katex/dist/katex.mjs',
  'ui/vendor/katex.min.css': 'katex/dist/katex.min.css',
  'ui/vendor/purify.es.mjs': 'dompurify/dist/purify.es.mjs',
};
const TYPES = { html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml',
  woff2: 'font/woff2' };
const typeOf = (path) => TYPES[path.slice(path.lastIndexOf('.') + 1)] || 'application/octet-stream';

function staticFile(path) {
  if (path === '') return join(webSrc, 'index.html');
  if (VENDOR[path]) return join(args.vendor, VENDOR[path]);
  let m = /^ui\/vendor\/fonts\/([A-Za-z0-9_-]+\.woff2)$/.exec(path);
  if (m) return join(args.vendor, 'katex', 'dist', 'fonts', m[1]);
  m = /^ui\/([a-z_]+\.(?:js|css|svg))$/.exec(path);
  return m ? join(webSrc, m[1]) : null;
}

const svg = (w, h, body) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">` +
  `<rect width="${w}" height="${h}" fill="#fff"/>${body}</svg>`;

const task = (status, done) => ({
  task_id: TASK, status, file_names: ['pro-sample.pdf'], documents: ['pro-sample'],
  error: null, queued_ahead: 0,
  progress: { documents_done: status === 'completed' ? 1 : 0, documents_total: 1,
    pages_done: done, pages_total: pageCount },
});

const unexpected = [];

// The scripted API and the files; anything else is a 404 and a failure.
async function answer(route) {
  const request = route.request();
  const url = new URL(request.url());
  const path = url.pathname.slice(1);
  const reply = (status, contentType, body) => route.fulfill({
    status, body, contentType,
    headers: { 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' },
  });
  const json = (status, value) => reply(status, 'application/json', JSON.stringify(value));
  if (url.origin !== new URL(BASE).origin) {
    unexpected.push(request.url());
    return route.abort();
  }
  const file = request.method() === 'GET' ? staticFile(path) : null;
  if (file) {
    try {
      return await reply(200, typeOf(file), readFileSync(file));
    } catch {
      unexpected.push(`missing file ${file}`);
      return reply(404, 'text/plain', 'not found');
    }
  }
  const taskPath = `v1/tasks/${TASK}`;
  if (path === 'v1/models') {
    return json(200, { object: 'list', data: [{ id: 'MinerU2.5-Pro-2605-1.2B', object: 'model',
      created: 0, owned_by: 'mineru.cpp', mineru_profile: 'pro' }] });
  }
  if (path === 'v1/document/parse' && request.method() === 'POST') {
    return json(202, task('pending', 0));
  }
  if (path === `${taskPath}/events`) {
    const events = `event: progress\ndata: ${JSON.stringify(task('processing', 1))}\n\n` +
      `event: done\ndata: ${JSON.stringify(task('completed', pageCount))}\n\n`;
    return reply(200, 'text/event-stream', events);
  }
  if (path === taskPath) return json(200, task('completed', pageCount));
  if (path === `${taskPath}/result`) return json(200, fixture);
  let m = new RegExp(`^${taskPath}/pages/0/(\\d+)$`).exec(path);
  if (m && Number(m[1]) < pageCount) {
    return reply(200, 'image/svg+xml', svg(600, 800,
      `<text x="30" y="40" font-size="20">page ${m[1]}</text>`));
  }
  m = new RegExp(`^${taskPath}/files/0/images/([^/]+)$`).exec(path);
  if (m && doc.images.includes(decodeURIComponent(m[1]))) {
    return reply(200, 'image/svg+xml',
      svg(160, 90, '<circle cx="80" cy="45" r="30" fill="#6a6"/>'));
  }
  unexpected.push(`${request.method()} ${request.url()}`);
  return json(404, { error: { message: 'not scripted' } });
}

const results = [];
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  results.push(Boolean(ok));
  return ok;
};

const browser = await chromium.launch({
  executablePath: args.chromium,
  args: process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.route('**/*', answer);
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const browserErrors = [];
  page.on('console', (msg) => msg.type() === 'error' && browserErrors.push(msg.text()));
  page.on('pageerror', (err) => browserErrors.push(`uncaught: ${err.message}`));
  // Runs before the page's own scripts (injected by the driver, not subject to the policy).
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  try {
    await checkUi(page);
    console.log("AFTER UI", JSON.stringify(await page.evaluate(() => window.__violations)));
    await checkSanitizer(page);
  } catch (err) {
    check(false, `no exception: ${err && err.stack ? err.stack : err}`);
  } finally {
    if (args.screenshot) await screenshots(page).catch((e) => console.error(`no screenshot: ${e}`));
  }
  // Chromium reports a violation as soon as it parses an inline event handler or a <style>
  // element, even in the inert document where DOMPurify parses (nothing runs there, and the
  // handler is dropped next): the hostile inputs above cause exactly those. Anything else, a
  // script element run or a URL loaded against the policy, would be a real failure.
  const violations = await page.evaluate(() => window.__violations).catch(() => ['(unknown)']);
  const parseTime = (v) => v === 'script-src-attr inline' || v === 'style-src-elem inline';
  check(violations.every(parseTime),
    `only parse-time reports of hostile inline handlers and styles (${violations.join('; ')})`);
  const parseReport = /^(Executing inline event handler|Applying inline style) violates /;
  const errors = browserErrors.filter((e) => !parseReport.test(e));
  check(errors.length === 0 && browserErrors.length === violations.length,
    `no other browser error ${errors.join('; ')}`);
  check(unexpected.length === 0, `only scripted requests ${unexpected.join('; ')}`);
} finally {
  await browser.close();
}
const failed = results.filter((ok) => !ok).length;
console.log(`\n${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

async function checkUi(page) {
  await page.goto(BASE);
  const header = page.locator('#server-model');
  await header.waitFor({ state: 'visible' });
  check(/MinerU2\.5-Pro profile/.test(await header.textContent()) &&
    (await header.getAttribute('data-profile')) === 'pro',
  `header names the profile: ${await header.textContent()}`);

  await page.setInputFiles('#file-input', { name: 'pro-sample.pdf', mimeType: 'application/pdf',
    buffer: Buffer.from('%PDF-1.4\n%scripted\n') });
  await page.locator('#result').waitFor({ state: 'visible' });

  // ---- Rendered view.
  const rendered = page.locator('#panel-rendered');
  const summaries = await rendered.locator('details > summary').allTextContents();
  check(JSON.stringify(summaries) ===
    '["natural_image","bar_chart","flowchart","natural_image"]',
  `one <details> per analysed figure (${summaries})`);
  const first = rendered.locator('details').first();
  check((await first.evaluate((d) => d.previousElementSibling.querySelector('img') !== null)) &&
    /A red car on a road\./.test(await first.textContent()),
  'the photo\'s caption text follows its image');
  const chart = rendered.locator('details').nth(1);
  const cells = await chart.locator('table th, table td').allTextContents();
  check(JSON.stringify(cells) === '["Year","Sales","2020","10"]',
    `the chart's Markdown table is a table (${cells})`);
  await chart.locator('summary').click();
  check(await chart.evaluate((d) => d.open), 'a summary opens its details (no script needed)');
  const flow = rendered.locator('details').nth(2);
  const mermaid = flow.locator('pre > code.language-mermaid');
  check((await mermaid.count()) === 1 &&
    (await mermaid.textContent()).startsWith('graph TD\n  A[Start] --> B{Ok?}'),
  'the flowchart\'s Mermaid is shown as code');
  check((await rendered.locator('svg').count()) === 0, 'nothing is drawn from the Mermaid');
  const cellMath = rendered.locator('table td .katex');
  check((await cellMath.count()) === 1, 'the formula in a table cell is rendered');
  const algorithm = rendered.locator('.mineru-algorithm');
  check((await algorithm.count()) === 1 && (await algorithm.locator('.katex').count()) === 1 &&
    (await algorithm.getAttribute('style')) === null,
  'the algorithm keeps its class, loses its style attribute and renders its formula');
  check(await algorithm.evaluate((el) => getComputedStyle(el).whiteSpace === 'pre-wrap' &&
    el.textContent.startsWith('for i in 1..n: ') && !el.textContent.endsWith('\n')),
  'the algorithm is laid out as pre-wrap by the style sheet, without framing newlines');
  check((await rendered.locator('p .katex').count()) >= 1, 'inline formulas in text render');
  const hostile = await rendered.evaluate((el) => {
    const attrs = [...el.querySelectorAll('*')].flatMap((e) => [...e.attributes]
      .filter((a) => /^on/i.test(a.name) || /^\s*javascript:/i.test(a.value))
      .map((a) => `${e.tagName}[${a.name}]`));
    const tags = [...el.querySelectorAll('script, iframe, form, input, object, embed, style')]
      .map((e) => e.tagName);
    const srcs = [...el.querySelectorAll('img[src]')].map((i) => i.getAttribute('src'));
    return { attrs, tags, srcs, pwned: window.__pwned };
  });
  check(hostile.attrs.length === 0 && hostile.tags.length === 0 && hostile.pwned === undefined,
    `hostile analysis text is neutralised (${JSON.stringify(hostile)})`);
  check(hostile.srcs.length === 5 &&
    hostile.srcs.every((s) => s.startsWith(`v1/tasks/${TASK}/files/0/images/`)),
  `images load only from the task (${hostile.srcs.length})`);

  // ---- Pages view: model.json by default, middle.json on request.
  await page.click('#tab-pages');
  await page.waitForFunction(() => [...document.querySelectorAll('#pages .page-frame img')]
    .every((img) => img.complete && img.naturalWidth > 0));
  const total = doc.model_json.reduce((n, p) => n + p.length, 0);
  check((await page.locator('#pages .layout-box').count()) === total,
    `model.json: every layout block is drawn (${total})`);
  const legendKeys = () => page.locator('#legend li').evaluateAll(
    (lis) => lis.map((li) => li.dataset.key));
  const modelLegend = await legendKeys();
  check(['image_block', 'chart', 'algorithm'].every((k) => modelLegend.includes(k)),
    `model.json legend lists the Pro types (${modelLegend})`);
  await page.selectOption('#boxes-select', 'middle_json');
  const boxes = page.locator('#pages .layout-box');
  check((await boxes.count()) === 21, `middle.json: 21 boxes (${await boxes.count()})`);
  check((await page.locator('#pages .layout-box[data-type="chart_body"]').count()) === 1,
    'the chart body is drawn');
  const merged = page.locator('#pages .layout-box.merged');
  const subImages = page.locator('#pages .layout-box.sub-image');
  check((await merged.count()) === 2 && (await subImages.count()) === 2,
    'two merged-away blocks and two sub-images are drawn');
  check(await merged.first().evaluate((el) => getComputedStyle(el).borderTopStyle === 'dashed') &&
    await subImages.first().evaluate((el) => getComputedStyle(el).borderTopStyle === 'dotted'),
  'merged-away blocks are dashed, sub-images dotted');
  const middleLegend = await legendKeys();
  check(['chart_body', 'image_body', 'merged', 'sub-image'].every((k) => middleLegend.includes(k)),
    `middle.json legend (${middleLegend})`);
  const titles = await boxes.evaluateAll((els) => els.map((e) => e.title));
  check(titles.includes('image_body (natural_image): A red car on a road.'),
    'a figure\'s box shows its analysis text as a tooltip');
  check((await page.locator('#pages .layout-box img, #pages .layout-box script').count()) === 0,
    'hostile text in a tooltip stays text');
  await page.selectOption('#boxes-select', 'model_json');
  check((await boxes.count()) === total, 'switching back draws model.json again');

  // ---- JSON view.
  await page.click('#tab-json');
  const v2 = page.locator('#json-select option[value="content_list_v2"]');
  check(!(await v2.evaluate((o) => o.hidden || o.disabled)), 'content_list_v2 is offered');
  await page.selectOption('#json-select', 'content_list_v2');
  const shown = JSON.parse(await page.locator('#json-raw').textContent());
  check(JSON.stringify(shown) === JSON.stringify(doc.content_list_v2),
    'content_list_v2 is shown as returned');
  await page.click('#tab-rendered');
}

// markdownToSafeHtml on its own, in the page (its policy applies to the imported modules too).
async function checkSanitizer(page) {
  const cases = await page.evaluate(async () => {
    const { markdownToSafeHtml } = await import('./ui/markdown.js');
    const keep = (src) => (/^images\/[^/]+$/.test(src) ? `x/${src}` : null);
    const inputs = {
      details: '![](images/a.jpg)\n\n<details>\n<summary>natural_image</summary>\n\nA car.\n' +
        '</details>',
      onerror: '<details>\n<summary>s</summary>\n\n<img src=x onerror="window.__pwned=1">\n' +
        '</details>',
      script: '<script>window.__pwned=2</script>\n\n<details><summary>s</summary>' +
        '<script>window.__pwned=3</script></details>',
      javascriptLink: '[a](javascript:window.__pwned=4) <a href="javascript:window.__pwned=5">b' +
        '</a> <a href=" JaVaScRiPt:window.__pwned=6">c</a>',
      ontoggle: '<details open ontoggle="window.__pwned=7"><summary>s</summary>x</details>',
      svg: '<svg><script>window.__pwned=8</script><a xlink:href="javascript:1">x</a></svg>' +
        '<math><mtext><img src=x onerror="window.__pwned=9"></mtext></math>',
      fenceBreakout: '```mermaid\n</code></pre><script>window.__pwned=10</script>\n```',
      iframe: '<iframe srcdoc="<script>parent.__pwned=11</script>"></iframe>' +
        '<object data="javascript:1"></object><embed src="javascript:1">',
      form: '<form action="javascript:1"><input name="password"><button>Go</button></form>',
      styleAttr: '<p style="background:url(javascript:1)">x</p><style>*{}</style>',
    };
    const out = {};
    for (const [name, md] of Object.entries(inputs)) out[name] = markdownToSafeHtml(md, keep);
    return { out, pwned: window.__pwned };
  });
  const { out } = cases;
  check(/<details>\s*<summary>natural_image<\/summary>\s*<p>A car\.<\/p>\s*<\/details>/
    .test(out.details) && out.details.includes('src="x/images/a.jpg"'),
  `<details> and <summary> survive sanitising: ${out.details}`);
  const dangerous = new RegExp('<script|<iframe|<object|<embed|<form|<input|<button|<style|' +
    '\\son[a-z]+=|javascript:|style=', 'i');
  for (const [name, html] of Object.entries(out)) {
    check(!dangerous.test(html), `sanitised ${name}: ${html}`);
  }
  check(out.fenceBreakout.includes('<code class="language-mermaid">&lt;/code&gt;&lt;/pre&gt;' +
    '&lt;script&gt;'), 'a fence cannot be broken out of');
  check(out.onerror.includes('<img>') || out.onerror.includes('<img loading="lazy">'),
    `a foreign image loses its src: ${out.onerror}`);
  check(cases.pwned === undefined, 'no hostile script ran');
}

async function screenshots(page) {
  mkdirSync(dirname(args.screenshot), { recursive: true });
  if (!(await page.locator('#result').isVisible())) {
    await page.screenshot({ path: args.screenshot, fullPage: true });
    return;
  }
  await page.click('#tab-rendered');
  await page.locator('#panel-rendered details').evaluateAll((ds) => ds.forEach((d) => {
    d.open = true;
  }));
  await page.screenshot({ path: args.screenshot, fullPage: true });
  await page.click('#tab-pages');
  await page.selectOption('#boxes-select', 'middle_json');
  await page.screenshot({ path: args.screenshot.replace(/(\.png)?$/i, '-pages.png'),
    fullPage: true });
  console.log(`screenshots: ${args.screenshot} and -pages.png`);
}
