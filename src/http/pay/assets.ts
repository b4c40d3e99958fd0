import { readFileSync } from 'node:fs';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { brandRules } from '../../domain/card.ts';

/**
 * First-party scripts of the hosted pages, served from 'self' (script-src 'self', nothing
 * inline), compressed once at start-up:
 *   GET /pay/assets/checkout.js   help while typing on the card form; the waiting page's poll
 */

export const checkoutScriptPath = '/pay/assets/checkout.js';

/** A static text asset with its gzip and brotli forms. */
export interface Asset {
  type: string;
  plain: Buffer;
  gzip: Buffer;
  br: Buffer;
}

export const asset = (type: string, text: string): Asset => {
  const plain = Buffer.from(text);
  return { type, plain, gzip: gzipSync(plain, { level: 9 }), br: brotliCompressSync(plain) };
};

/** Sends the best encoding the client accepts. */
export function sendAsset(req: FastifyRequest, reply: FastifyReply, a: Asset) {
  const accept = String(req.headers['accept-encoding'] ?? '');
  const enc = /\bbr\b/.test(accept) ? 'br' : /\bgzip\b/.test(accept) ? 'gzip' : undefined;
  reply.header('Vary', 'Accept-Encoding').type(a.type);
  if (enc) reply.header('Content-Encoding', enc);
  return reply.send(enc ? a[enc] : a.plain);
}

const CHECKOUT = asset(
  'text/javascript; charset=utf-8',
  readFileSync(new URL('./assets/checkout.js', import.meta.url), 'utf8').replace('/*BRAND_RULES*/ null', JSON.stringify(brandRules())),
);

export const assetRoutes = () => async (app: FastifyInstance) => {
  app.get(checkoutScriptPath, { schema: { hide: true } }, async (req, reply) => {
    reply.header('Cache-Control', 'public, max-age=300').header('X-Content-Type-Options', 'nosniff');
    return sendAsset(req, reply, CHECKOUT);
  });
};
