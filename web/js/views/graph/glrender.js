// The WebGL2 side of the big-graph drawing: the buffers of the shader programs (glshaders.js)
// and the draw calls. Boxes (group frames, collapsed-group shadows, op boxes) are rounded
// rectangles, edges one batch of line segments, arrowheads one of triangles, labels glyph
// quads from the atlas (glyphs.js). Everything is in graph coordinates, uploaded once per
// view; a pan or zoom changes three uniforms. Not instanced:
// SwiftShader (the software WebGL of headless Chromium and of machines without a GPU) runs
// an instanced draw as one draw per instance, hundreds of times slower than plain triangles.
// Items come grouped by tile (glscene.js), so a frame draws only the tiles on screen; far
// out, where boxes are dots, the caller hands a ready image instead (drawImage). Each tile's
// coordinates are relative to its corner, which goes in the view's offset (computed in double
// precision here): a chain of 100,000 ops is 12 million px long, where float32 has whole
// pixels only, and boxes and edges deep in it would shake when zoomed in.
import { compilePrograms } from './glshaders.js';
import { unpack } from './glcolors.js';

export const RECT_FLOATS = 8; // per box as the caller gives it: x, y, w, h, radius, stroke width, least stroke px, -
const VERT_FLOATS = 10; // per vertex: the corner (2) and the box's 8
const GLYPH_FLOATS = 6; // per vertex: the corner (2) and the glyph's left, top, scale, number
const CORNERS = [0, 0, 1, 0, 0, 1, 1, 1];

/** Index buffer contents for `n` quads of 4 vertices each (two triangles a quad). */
function quadIndices(n) {
  const idx = new Uint32Array(n * 6);
  for (let q = 0; q < n; q += 1) {
    const v = q * 4;
    idx.set([v, v + 1, v + 2, v + 2, v + 1, v + 3], q * 6);
  }
  return idx;
}

export class GLRenderer {
  /** Throws when the browser gives no WebGL2 context (the caller draws SVG instead). */
  constructor(canvas) {
    // no multisampling: boxes antialias in their shader, and MSAA is costly in software
    const gl = canvas.getContext('webgl2', { antialias: false, premultipliedAlpha: true, alpha: false, depth: false });
    if (!gl) throw new Error('WebGL2 is not available');
    this.gl = gl;
    this.canvas = canvas;
    ({ rect: this.rect, flat: this.flat, glyph: this.glyph, image: this.image } = compilePrograms(gl));
    this.quad = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, this.quad);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(CORNERS), gl.STATIC_DRAW);
    this.rectGeom = gl.createBuffer();
    this.rectColor = gl.createBuffer();
    this.rectIndex = gl.createBuffer();
    this.lineBuf = gl.createBuffer();
    this.arrowBuf = gl.createBuffer();
    this.glyphBuf = gl.createBuffer();
    this.glyphColor = gl.createBuffer();
    this.glyphIndex = gl.createBuffer();
    this.texture = gl.createTexture();
    this.imageTexture = gl.createTexture();
    this.tiles = [];
    this.glyphs = 0;
    this.vaoRects = gl.createVertexArray();
    gl.bindVertexArray(this.vaoRects);
    const stride = VERT_FLOATS * 4;
    this.#attr(this.rectGeom, 0, 2, gl.FLOAT, false, stride, 0);
    this.#attr(this.rectGeom, 1, 4, gl.FLOAT, false, stride, 8);
    this.#attr(this.rectGeom, 2, 4, gl.FLOAT, false, stride, 24);
    this.#attr(this.rectColor, 3, 4, gl.UNSIGNED_BYTE, true, 8, 0);
    this.#attr(this.rectColor, 4, 4, gl.UNSIGNED_BYTE, true, 8, 4);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.rectIndex);
    this.vaoLines = this.#flatVAO(this.lineBuf);
    this.vaoArrows = this.#flatVAO(this.arrowBuf);
    this.vaoGlyphs = gl.createVertexArray();
    gl.bindVertexArray(this.vaoGlyphs);
    this.#attr(this.glyphBuf, 0, 2, gl.FLOAT, false, GLYPH_FLOATS * 4, 0);
    this.#attr(this.glyphBuf, 1, 4, gl.FLOAT, false, GLYPH_FLOATS * 4, 8);
    this.#attr(this.glyphColor, 2, 4, gl.UNSIGNED_BYTE, true, 4, 0);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.glyphIndex);
    this.vaoImage = this.#flatVAO(this.quad);
    gl.bindVertexArray(null);
    this.glyphVerts = new Float32Array(0);
    this.glyphVertColors = new Uint32Array(0);
    this.glyphCapacity = 0;
  }

  #attr(buffer, loc, size, type, normalized, stride, offset) {
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
    gl.enableVertexAttribArray(loc);
    gl.vertexAttribPointer(loc, size, type, normalized, stride, offset);
  }

  #flatVAO(buffer) {
    const gl = this.gl;
    const vao = gl.createVertexArray();
    gl.bindVertexArray(vao);
    this.#attr(buffer, 0, 2, gl.FLOAT, false, 0, 0);
    gl.bindVertexArray(null);
    return vao;
  }

  /** Expand boxes [from, to) of the caller's arrays into the vertex arrays (4 vertices each). */
  #expand(rects, colors, from, to) {
    const v = this.rectVerts;
    const c = this.rectVertColors;
    for (let r = from; r < to; r += 1) {
      const src = r * RECT_FLOATS;
      for (let k = 0; k < 4; k += 1) {
        const o = (r * 4 + k) * VERT_FLOATS;
        v[o] = CORNERS[k * 2];
        v[o + 1] = CORNERS[k * 2 + 1];
        for (let j = 0; j < RECT_FLOATS; j += 1) v[o + 2 + j] = rects[src + j];
        c[(r * 4 + k) * 2] = colors[r * 2];
        c[(r * 4 + k) * 2 + 1] = colors[r * 2 + 1];
      }
    }
  }

  /**
   * Upload a whole scene. rects: Float32Array (RECT_FLOATS per box) and colors: Uint32Array
   * (fill, stroke per box); lines: Float32Array of segment end points; arrows: Float32Array
   * of triangle corners; tiles: [{box: [x0, y0, x1, y1], origin: [x, y], frames, rects,
   * lines, arrows}] with each a [start, end) range of boxes (frames: drawn under the edges),
   * segments or triangles, whose coordinates are relative to the tile's origin: a frame draws
   * the ranges of the tiles it sees.
   */
  setScene({ rects, colors, lines, arrows, tiles }) {
    const gl = this.gl;
    const n = rects.length / RECT_FLOATS;
    this.rectVerts = new Float32Array(n * 4 * VERT_FLOATS);
    this.rectVertColors = new Uint32Array(n * 4 * 2);
    this.#expand(rects, colors, 0, n);
    gl.bindVertexArray(null);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.rectGeom);
    gl.bufferData(gl.ARRAY_BUFFER, this.rectVerts, gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.rectColor);
    gl.bufferData(gl.ARRAY_BUFFER, this.rectVertColors, gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.rectIndex);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, quadIndices(n), gl.STATIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.lineBuf);
    gl.bufferData(gl.ARRAY_BUFFER, lines, gl.STATIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.arrowBuf);
    gl.bufferData(gl.ARRAY_BUFFER, arrows, gl.STATIC_DRAW);
    this.tiles = tiles;
  }

  /** Re-upload boxes [from, to) after their geometry or colours changed. */
  updateRects(rects, colors, from = 0, to = rects.length / RECT_FLOATS) {
    if (to <= from) return;
    const gl = this.gl;
    this.#expand(rects, colors, from, to);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.rectGeom);
    gl.bufferSubData(gl.ARRAY_BUFFER, from * 4 * VERT_FLOATS * 4, this.rectVerts, from * 4 * VERT_FLOATS, (to - from) * 4 * VERT_FLOATS);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.rectColor);
    gl.bufferSubData(gl.ARRAY_BUFFER, from * 4 * 8, this.rectVertColors, from * 4 * 2, (to - from) * 4 * 2);
  }

  /** Upload the label glyphs (a GlyphRun, relative to `origin`) and, if it changed, the atlas. */
  setGlyphs(run, atlas, origin = [0, 0]) {
    this.glyphOrigin = origin;
    const gl = this.gl;
    if (atlas.dirty) {
      gl.bindTexture(gl.TEXTURE_2D, this.texture);
      gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, false);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, atlas.canvas);
      gl.generateMipmap(gl.TEXTURE_2D);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR_MIPMAP_LINEAR);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
      atlas.dirty = false;
      this.atlasShape = [atlas.cellW, atlas.cellH, atlas.cols, atlas.canvas.height / atlas.cellH];
    }
    const n = run.length;
    gl.bindVertexArray(null);
    if (n > this.glyphCapacity) {
      this.glyphCapacity = Math.max(n, this.glyphCapacity * 2, 1024);
      this.glyphVerts = new Float32Array(this.glyphCapacity * 4 * GLYPH_FLOATS);
      this.glyphVertColors = new Uint32Array(this.glyphCapacity * 4);
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.glyphIndex);
      gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, quadIndices(this.glyphCapacity), gl.STATIC_DRAW);
    }
    const v = this.glyphVerts;
    for (let i = 0; i < n; i += 1) {
      for (let k = 0; k < 4; k += 1) {
        const o = (i * 4 + k) * GLYPH_FLOATS;
        v[o] = CORNERS[k * 2];
        v[o + 1] = CORNERS[k * 2 + 1];
        v[o + 2] = run.f[i * 4];
        v[o + 3] = run.f[i * 4 + 1];
        v[o + 4] = run.f[i * 4 + 2];
        v[o + 5] = run.f[i * 4 + 3];
        this.glyphVertColors[i * 4 + k] = run.c[i];
      }
    }
    gl.bindBuffer(gl.ARRAY_BUFFER, this.glyphBuf);
    gl.bufferData(gl.ARRAY_BUFFER, v.subarray(0, n * 4 * GLYPH_FLOATS), gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.glyphColor);
    gl.bufferData(gl.ARRAY_BUFFER, this.glyphVertColors.subarray(0, n * 4), gl.DYNAMIC_DRAW);
    this.glyphs = n;
  }

  /** Size the drawing buffer to the element (css px × devicePixelRatio). */
  resize() {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(this.canvas.clientWidth * dpr));
    const h = Math.max(1, Math.round(this.canvas.clientHeight * dpr));
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
  }

  #use({ program, uniforms }, k, tx, ty) {
    const gl = this.gl;
    gl.useProgram(program);
    gl.uniform3f(uniforms.uView, k, tx, ty);
    gl.uniform2f(uniforms.uSize, this.canvas.clientWidth || 1, this.canvas.clientHeight || 1);
    return uniforms;
  }

  #begin(background) {
    const gl = this.gl;
    this.resize();
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    const bg = unpack(background);
    gl.clearColor(bg[0], bg[1], bg[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
  }

  /**
   * One frame at scale k, offset (tx, ty); view: the graph rectangle on screen;
   * colours: {background, edge} packed. Returns how many boxes and segments were sent.
   */
  draw(k, tx, ty, view, { background, edge }) {
    const gl = this.gl;
    this.#begin(background);
    const sent = { rects: 0, lines: 0 };
    const visible = this.tiles.filter((t) => {
      const b = t.box;
      return !(b[0] > view[2] || b[2] < view[0] || b[1] > view[3] || b[3] < view[1]);
    });
    // one pass per kind; in it, each tile with the view's offset moved to its origin
    const pass = (kind, program, vao, send) => {
      const u = this.#use(program, k, tx, ty);
      if (program === this.flat) gl.uniform4f(u.uColor, ...unpack(edge));
      gl.bindVertexArray(vao);
      for (const t of visible) {
        const [s, e] = t[kind];
        if (e <= s) continue;
        gl.uniform3f(u.uView, k, tx + t.origin[0] * k, ty + t.origin[1] * k);
        send(s, e);
      }
    };
    const rects = (s, e) => {
      gl.drawElements(gl.TRIANGLES, (e - s) * 6, gl.UNSIGNED_INT, s * 6 * 4);
      sent.rects += e - s;
    };
    pass('frames', this.rect, this.vaoRects, rects);
    pass('lines', this.flat, this.vaoLines, (s, e) => {
      gl.drawArrays(gl.LINES, s * 2, (e - s) * 2);
      sent.lines += e - s;
    });
    pass('arrows', this.flat, this.vaoArrows, (s, e) => gl.drawArrays(gl.TRIANGLES, s * 3, (e - s) * 3));
    pass('rects', this.rect, this.vaoRects, rects);
    if (this.glyphs && this.atlasShape) {
      const [gx, gy] = this.glyphOrigin;
      const g = this.#use(this.glyph, k, tx + gx * k, ty + gy * k);
      gl.uniform4f(g.uAtlas, ...this.atlasShape);
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, this.texture);
      gl.uniform1i(g.uTex, 0);
      gl.bindVertexArray(this.vaoGlyphs);
      gl.drawElements(gl.TRIANGLES, this.glyphs * 6, gl.UNSIGNED_INT, 0);
    }
    gl.bindVertexArray(null);
    return sent;
  }

  /** One frame that is an image made by the caller (RGBA bytes, the canvas's size). */
  drawImage(pixels, width, height) {
    const gl = this.gl;
    this.resize();
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    gl.disable(gl.BLEND);
    gl.bindTexture(gl.TEXTURE_2D, this.imageTexture);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 4);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, width, height, 0, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    const { program, uniforms } = this.image;
    gl.useProgram(program);
    gl.activeTexture(gl.TEXTURE0);
    gl.uniform1i(uniforms.uTex, 0);
    gl.bindVertexArray(this.vaoImage);
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    gl.bindVertexArray(null);
  }

  destroy() {
    const ext = this.gl.getExtension('WEBGL_lose_context');
    if (ext) ext.loseContext();
  }
}
