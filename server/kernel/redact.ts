/**
 * Text meant for clients never names where the appliance lives on disk (contract 2.6): absolute paths in an
 * engine's reason or an error's detail are cut to their last two parts, which still say which file is meant.
 * The operator's log keeps the full text.
 */

/** An absolute POSIX path after a start, space, quote, bracket or `=`, or a Windows drive path. */
const ABSOLUTE_PATH = /(^|[\s'"(=[])((?:\/[^\s/'"()[\]]+){2,}\/?|[A-Za-z]:\\[^\s'"()[\]]+)/g;

/** The appliance's own URL paths, which messages name on purpose (`see GET /api/v1/engines`). */
const OWN_ROUTES = /^\/(api|gui)\//;

/** `text` with every absolute path shortened to `…/<parent>/<name>`. */
export function redactPaths(text: string): string {
  return text.replace(ABSOLUTE_PATH, (match, before: string, path: string) => {
    if (OWN_ROUTES.test(path)) return match;
    const parts = path.split(/[\\/]/).filter((part) => part !== '' && !/^[A-Za-z]:$/.test(part));
    return `${before}…/${parts.slice(-2).join('/')}`;
  });
}

/** A connection string with its password hidden (`postgres://shop:***@db/shop`), for logs, messages and markers. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:@/]*):[^@/]*@/i, '$1:***@');
}
