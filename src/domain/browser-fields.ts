/**
 * The AReq's browser fields (EMV 3DS 2.2.0, browser channel) from the hosted card form: what the
 * page's script measured (screen, colour depth, time zone, Java, language), else the request
 * headers' fallbacks with browserJavascriptEnabled false (docs/three-d-secure.md "Order to AReq").
 */

export interface BrowserFields {
  ip?: string;
  accept?: string;
  user_agent?: string;
  language?: string;
  javascript: boolean;
  java?: boolean;
  color_depth?: number;
  screen_height?: number;
  screen_width?: number;
  /** minutes from UTC, as Date.getTimezoneOffset */
  tz?: number;
}

/** the colour depths EMV names (bits); a browser's other value is sent as the next lower one */
const DEPTHS = [1, 4, 8, 15, 16, 24, 32, 48];

const whole = (v: unknown, min: number, max: number) => {
  if (typeof v !== 'string' || !/^-?\d{1,6}$/.test(v)) return undefined;
  const n = Number(v);
  return n >= min && n <= max ? n : undefined;
};

/** A language tag as a browser sends it (BCP 47, at most 8 characters in 2.2.0), or undefined. */
const tag = (v: unknown) => (typeof v === 'string' && /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(v) && v.length <= 8 ? v : undefined);

/**
 * The browser of a card form's POST: `form` its fields (the script's `browser_*`), `headers` the
 * request's Accept, User-Agent and Accept-Language, `ip` its address. The script's measurements
 * count only when all of screen, colour depth and time zone came and read well.
 */
export function browserFields(
  form: Record<string, unknown>,
  headers: { accept?: string; user_agent?: string; accept_language?: string },
  ip: string | undefined,
): BrowserFields {
  const headerLanguage = tag(headers.accept_language?.split(',')[0]?.split(';')[0]?.trim());
  const base: BrowserFields = {
    ...(ip ? { ip } : {}),
    ...(headers.accept ? { accept: headers.accept } : {}),
    ...(headers.user_agent ? { user_agent: headers.user_agent } : {}),
    ...(headerLanguage ? { language: headerLanguage } : {}),
    javascript: false,
  };
  const depth = whole(form.browser_color_depth, 1, 999);
  const height = whole(form.browser_screen_height, 1, 999_999);
  const width = whole(form.browser_screen_width, 1, 999_999);
  const tz = whole(form.browser_tz, -840, 720);
  if (form.browser_javascript !== 'true' || depth === undefined || height === undefined || width === undefined || tz === undefined)
    return base;
  const language = tag(form.browser_language) ?? base.language;
  return {
    ...base,
    ...(language ? { language } : {}),
    javascript: true,
    java: form.browser_java === 'true',
    color_depth: [...DEPTHS].reverse().find((d) => d <= depth) ?? 1,
    screen_height: height,
    screen_width: width,
    tz,
  };
}
