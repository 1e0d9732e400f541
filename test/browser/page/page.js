// The test page's script: what a web app on another origin does with Flagstore. The jest test calls these
// through page.evaluate; each answers a plain object describing what JavaScript could see, never throws.
'use strict';

function bytesOf(base64) {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function failure(error) {
  return { rejected: { name: error && error.name, message: String(error && error.message) } };
}

window.flagstore = {
  /**
   * fetch(url, init) and what JS could read of the answer: status, the headers JS may see (CORS-safelisted
   * and exposed ones only), the body (parsed when JSON). A fetch the browser refuses answers { rejected }.
   * body: { json } (sent as application/json), { bytes: base64, type } (a Blob), or
   * { form: { file: { bytes: base64, type, name }, metadata } } (multipart FormData).
   */
  async request(url, { method = 'GET', headers = {}, body, cache = 'default' } = {}) {
    const init = { method, headers: { ...headers }, cache, mode: 'cors', credentials: 'omit' };
    if (body && 'json' in body) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body.json);
    } else if (body && 'bytes' in body) {
      init.body = new Blob([bytesOf(body.bytes)], { type: body.type });
      init.headers['Content-Type'] = body.type;
    } else if (body && 'form' in body) {
      const form = new FormData();
      if (body.form.metadata !== undefined) form.append('metadata', body.form.metadata);
      const file = body.form.file;
      form.append('file', new Blob([bytesOf(file.bytes)], { type: file.type }), file.name);
      init.body = form; // the browser writes the multipart Content-Type with its boundary
    }
    let response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      return failure(error);
    }
    const seen = {};
    response.headers.forEach((value, name) => (seen[name] = value));
    const text = await response.text();
    let parsed = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: seen, body: parsed };
  },

  /**
   * Loads url into an <img> (crossOrigin 'anonymous' unless told otherwise), draws it on a canvas and reads
   * pixel (x, y) back with getImageData, which throws a SecurityError when the image tainted the canvas.
   * Answers { width, height, pixel: [r, g, b, a] }, { loadFailed } or { readFailed }.
   */
  async readPixel(url, { crossOrigin = 'anonymous', x = 0, y = 0 } = {}) {
    const image = new Image();
    if (crossOrigin !== null) image.crossOrigin = crossOrigin;
    const loaded = new Promise((resolve) => {
      image.onload = () => resolve(true);
      image.onerror = () => resolve(false);
    });
    image.src = url;
    if (!(await loaded)) return { loadFailed: `the image ${url} did not load (crossOrigin=${crossOrigin})` };
    const canvas = document.createElement('canvas');
    canvas.width = image.naturalWidth;
    canvas.height = image.naturalHeight;
    const context = canvas.getContext('2d', { willReadFrequently: true });
    context.drawImage(image, 0, 0);
    try {
      const data = context.getImageData(x, y, 1, 1).data;
      return { width: image.naturalWidth, height: image.naturalHeight, pixel: Array.from(data) };
    } catch (error) {
      return { readFailed: { name: error.name, message: error.message } };
    }
  },
};
