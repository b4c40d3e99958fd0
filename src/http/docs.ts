import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { asset, sendAsset, type Asset } from './pay/assets.ts';
import { setPageHeaders } from './pay/security.ts';

/**
 * GET /docs: the API reference, rendered on the server from the OpenAPI document (/openapi.json)
 * the route schemas make. One page, one hashed stylesheet and one hashed script (Copy buttons,
 * an enhancement: the page reads the same without it), compressed; it works on a phone and
 * carries the hosted pages' security headers. Every operation shows its summary, its parameters
 * and body fields (with their allowed values), an example request as curl, and each response
 * code with what it means and an example body.
 */

/**
 * A node of the OpenAPI document, walked as JSON: schemas, operations and examples of every shape
 * the route schemas make; the page reads what a node has and shows nothing for what it lacks.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any node of a JSON document: typing each of OpenAPI's shapes would only restate the spec
export type Json = Record<string, any>;

const esc = (v: unknown) =>
  String(v ?? '').replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

const CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f8f9fb;color:#101828;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
header,main,footer{max-width:60rem;margin:0 auto;padding:0 1rem}
header{padding-top:1.5rem}
h1{font-size:1.6rem;margin:0 0 .5rem}
h2{font-size:1.3rem;margin:2.5rem 0 .75rem;padding-bottom:.3rem;border-bottom:2px solid #d0d5dd}
h3{font-size:1.05rem;margin:0;overflow-wrap:anywhere}
h4{font-size:.95rem;margin:1rem 0 .4rem}
a{color:#1849a9}
:focus-visible{outline:3px solid #1849a9;outline-offset:2px}
nav ul{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.4rem .9rem}
.op{background:#fff;border:1px solid #d0d5dd;border-radius:12px;padding:1rem;margin:0 0 1rem}
.method{display:inline-block;min-width:4.2rem;text-align:center;font-size:.8rem;font-weight:700;border-radius:6px;padding:.1rem .4rem;margin-right:.4rem;color:#fff;background:#344054}
.get{background:#175cd3}.post{background:#067647}.put{background:#93370d}.delete{background:#b42318}
code{font:.9em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
pre{background:#101828;color:#f2f4f7;border-radius:8px;padding:.75rem;overflow:auto;max-height:24rem;font-size:.85rem;margin:.4rem 0}
pre code{overflow-wrap:normal}
.fields{list-style:none;padding:0;margin:0}
.fields li{padding:.35rem 0;border-top:1px solid #eaecf0}
.fields.nested{margin:.35rem 0 0 .6rem;padding-left:.6rem;border-left:2px solid #d0d5dd}
form.search{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center;margin:.75rem 0}
form.search input{font:inherit;padding:.3rem .5rem;border:1px solid #667085;border-radius:6px;min-width:0;flex:1 1 12rem}
form.search button{font:inherit;padding:.3rem .8rem;border-radius:6px;border:1px solid #1849a9;background:#1849a9;color:#fff}
.type{color:#475467;font-size:.85rem}
.req{color:#b42318;font-size:.8rem;font-weight:700}
.values{font-size:.85rem;color:#344054}
details{margin:.4rem 0}
summary{cursor:pointer;font-weight:600}
.code{font-weight:700}
footer{padding:2rem 1rem;color:#475467;font-size:.85rem}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
button.copy{font:inherit;font-size:.8rem;padding:.15rem .6rem;border-radius:6px;border:1px solid #1849a9;background:#fff;color:#1849a9;cursor:pointer}
`.trim();

/**
 * The one script of the page: a Copy button above every example, added only where the browser
 * can write to the clipboard (without it the page is as before). Its text is fixed, so the CSP
 * allows it by hash; a status region tells a screen reader what was copied.
 */
const COPY_SCRIPT = `
(() => {
  if (!navigator.clipboard) return;
  const status = document.createElement('p');
  status.setAttribute('role', 'status');
  status.className = 'sr-only';
  document.body.append(status);
  for (const pre of document.querySelectorAll('pre')) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'copy';
    button.textContent = 'Copy';
    button.setAttribute('aria-label', 'Copy ' + (pre.getAttribute('aria-label') || 'example'));
    button.addEventListener('click', async () => {
      await navigator.clipboard.writeText(pre.innerText);
      status.textContent = 'Copied ' + (pre.getAttribute('aria-label') || 'the example');
    });
    pre.before(button);
  }
})();
`.trim();

const STYLE_HASH = `sha256-${createHash('sha256').update(CSS).digest('base64')}`;
const SCRIPT_HASH = `sha256-${createHash('sha256').update(COPY_SCRIPT).digest('base64')}`;
const DOCS_CSP = `default-src 'none'; style-src '${STYLE_HASH}'; script-src '${SCRIPT_HASH}'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** Follows `#/components/schemas/X` references. */
const resolver =
  (doc: Json) =>
  (s: Json | undefined): Json | undefined => {
    let cur = s;
    for (let i = 0; cur?.$ref && i < 10; i++) cur = doc.components?.schemas?.[String(cur.$ref).split('/').pop()!];
    return cur;
  };

function typeOf(s: Json | undefined, resolve: (s?: Json) => Json | undefined): string {
  const r = resolve(s);
  if (!r) return 'any';
  if (r.anyOf || r.oneOf) return (r.anyOf ?? r.oneOf).map((x: Json) => typeOf(x, resolve)).join(' or ');
  if (r.type === 'array') return `array of ${typeOf(r.items, resolve)}`;
  const t = Array.isArray(r.type) ? r.type.join(' or ') : (r.type ?? 'object');
  return r.format ? `${t} (${r.format})` : t;
}

/**
 * The fields of an object schema: name, type, required, description and allowed values; the
 * fields of a nested object or array of objects beneath their field (transactions, customer...),
 * a few levels deep.
 */
function fields(schema: Json | undefined, resolve: (s?: Json) => Json | undefined, depth = 0): string {
  const s = resolve(schema);
  const props = s?.properties as Json | undefined;
  if (!props || !Object.keys(props).length) return '';
  const required = new Set<string>(s?.required ?? []);
  const items = Object.entries(props).map(([name, p]) => {
    const r = resolve(p as Json) ?? {};
    const values = r.enum ?? (r.type === 'array' ? resolve(r.items)?.enum : undefined);
    const limits = [
      r.minimum !== undefined ? `min ${r.minimum}` : '',
      r.maximum !== undefined ? `max ${r.maximum}` : '',
      r.maxLength !== undefined ? `max length ${r.maxLength}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    const inner = r.type === 'array' ? resolve(r.items) : r;
    const nested = depth < 3 && inner?.properties ? fields(inner, resolve, depth + 1) : '';
    return `<li><code>${esc(name)}</code> <span class="type">${esc(typeOf(p as Json, resolve))}${limits ? `, ${esc(limits)}` : ''}</span>${
      required.has(name) ? ' <span class="req">required</span>' : ''
    }${r.description ? ` — ${esc(r.description)}` : ''}${values ? `<br><span class="values">One of: ${values.map((v: unknown) => `<code>${esc(v)}</code>`).join(', ')}</span>` : ''}${nested}</li>`;
  });
  return `<ul class="fields${depth ? ' nested' : ''}">${items.join('')}</ul>`;
}

const pre = (label: string, text: string) => `<pre tabindex="0" aria-label="${esc(label)}"><code>${esc(text)}</code></pre>`;

function operation(doc: Json, base: string, path: string, method: string, op: Json): string {
  const resolve = resolver(doc);
  const id = slug(`${method}-${path}`);
  const params = (op.parameters ?? []) as Json[];
  const body = op.requestBody?.content?.['application/json'];
  const example = body?.example ?? (body?.examples ? Object.values(body.examples as Json)[0]?.value : undefined);
  const samplePath = path.replace(/\{([a-z_]+)\}/g, (_m, p: string) => `{${p}}`);
  const auth = op.security?.length ? ` \\\n  -u "$TENDER_API_KEY:"` : '';
  const curl =
    `curl -X ${method.toUpperCase()} "${base}${samplePath}"${auth}` +
    (example !== undefined
      ? ` \\\n  -H "content-type: application/json" \\\n  -d '${JSON.stringify(example, null, 2).replace(/'/g, "'\\''")}'`
      : '');
  const responses = Object.entries((op.responses ?? {}) as Json)
    .map(([code, r]) => {
      const media = Object.entries((r.content ?? {}) as Json)[0] as [string, Json] | undefined;
      const ex = media?.[1]?.example;
      const shown = ex === undefined ? '' : pre(`Example ${code} response`, typeof ex === 'string' ? ex : JSON.stringify(ex, null, 2));
      return `<details><summary><span class="code">${esc(code)}</span> ${esc(r.description)}</summary>${shown}</details>`;
    })
    .join('');
  return `<section class="op" id="${id}" aria-labelledby="${id}-h">
<h3 id="${id}-h"><span class="method ${esc(method)}">${esc(method.toUpperCase())}</span><code>${esc(path)}</code></h3>
<p>${esc(op.summary ?? '')}</p>
${op.description ? `<p>${esc(op.description)}</p>` : ''}
${params.length ? `<h4>Parameters</h4><ul class="fields">${params.map((p) => `<li><code>${esc(p.name)}</code> <span class="type">in ${esc(p.in)}, ${esc(typeOf(p.schema, resolve))}</span>${p.required ? ' <span class="req">required</span>' : ''}${p.schema?.enum ? `<br><span class="values">One of: ${p.schema.enum.map((v: unknown) => `<code>${esc(v)}</code>`).join(', ')}</span>` : ''}</li>`).join('')}</ul>` : ''}
${body ? `<h4>Request body</h4>${fields(body.schema, resolve)}` : ''}
<h4>Example request</h4>
${pre(`Example request: ${method.toUpperCase()} ${path}`, curl)}
<h4>Responses</h4>
${responses}
</section>`;
}

const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .toLowerCase();

/**
 * The whole reference page of an OpenAPI document; with `q`, only the operations whose text
 * (path, summary, fields at every depth, examples) contains it: a search that needs no script.
 */
function renderReference(doc: Json, q = ''): string {
  const want = q.trim().toLowerCase();
  let matches = 0;
  const base = String(doc.servers?.[0]?.url ?? '').replace(/\/+$/, '');
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const [method, op] of Object.entries(ops as Json)) {
      if (!['get', 'post', 'put', 'delete', 'patch'].includes(method)) continue;
      const tag = (op as Json).tags?.[0] ?? 'other';
      const html = operation(doc, base, path, method, op as Json);
      if (want && !textOf(html).includes(want)) continue;
      matches++;
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  const tags = [...byTag.keys()];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info?.title ?? 'API reference')}</title>
<link rel="icon" href="data:,">
<style>${CSS}</style>
</head>
<body>
<header>
<h1>${esc(doc.info?.title ?? 'API reference')}</h1>
<p>${esc(doc.info?.description ?? '')} Base URL: <code>${esc(base)}</code>. Authentication: HTTP Basic, the API key as user name and an empty password. The machine-readable document: <a href="/openapi.json">/openapi.json</a>.</p>
<form method="get" action="/docs" class="search" role="search"><label for="q">Search the reference</label><input type="search" id="q" name="q" maxlength="100" value="${esc(q)}"><button type="submit">Search</button></form>
${want ? `<p role="status">${matches} operation${matches === 1 ? '' : 's'} mention <code>${esc(q.trim())}</code>. <a href="/docs">Show all</a></p>` : ''}
<nav aria-label="Sections"><ul>${tags.map((t) => `<li><a href="#${slug(t)}">${esc(t)}</a></li>`).join('')}</ul></nav>
</header>
<main>
${tags.map((t) => `<section aria-labelledby="${slug(t)}"><h2 id="${slug(t)}">${esc(t)}</h2>\n${byTag.get(t)!.join('\n')}</section>`).join('\n')}
</main>
<footer>Tender ${esc(doc.info?.version ?? '')}</footer>
<script>${COPY_SCRIPT}</script>
</body>
</html>`;
}

/** GET /docs (the document is read once, after the routes are all registered). */
export const docsRoutes = (document: () => Json) => async (app: FastifyInstance) => {
  let page: Asset | undefined;
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const raw = (req.query as Record<string, unknown> | undefined)?.q;
    const q = typeof raw === 'string' ? raw.slice(0, 100) : '';
    setPageHeaders(reply, DOCS_CSP);
    reply.header('Cache-Control', 'no-cache');
    // a search renders its own page; the whole reference is rendered once and kept
    if (q.trim()) return sendAsset(req, reply, asset('text/html; charset=utf-8', renderReference(document(), q)));
    page ??= asset('text/html; charset=utf-8', renderReference(document()));
    return sendAsset(req, reply, page);
  };
  app.get('/docs', { schema: { hide: true } }, handler);
};
