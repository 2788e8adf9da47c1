// The WebGL2 side of the big-graph drawing: four small shader programs and their buffers.
// Boxes (group frames, collapsed-group shadows, op boxes) are instanced rounded rectangles
// with fill and stroke, edges one batch of line segments, arrowheads one batch of
// triangles, labels instanced glyph quads from the atlas (glyphs.js). Everything is in graph
// coordinates, uploaded once per view; a pan or zoom only changes three uniforms.
const RECT_VS = `#version 300 es
layout(location=0) in vec2 corner;
layout(location=1) in vec4 box;     // x, y, w, h (graph px)
layout(location=2) in vec4 params;  // corner radius, stroke width (graph px), least stroke (screen px), -
layout(location=3) in vec4 fill;
layout(location=4) in vec4 stroke;
uniform vec3 uView;  // k, tx, ty: screen = graph * k + t (css px)
uniform vec2 uSize;  // the canvas in css px
out vec2 vLocal; out vec2 vHalf; out float vRadius; out float vStroke;
out vec4 vFill; out vec4 vStrokeColor;
void main() {
  float k = uView.x;
  vec2 size = max(box.zw * k, vec2(1.5));   // never thinner than a pixel: far out, a dot
  vec2 center = (box.xy + box.zw * 0.5) * k + uView.yz;
  float sw = stroke.a > 0.0 ? max(params.y * k, params.z) : 0.0;
  vHalf = size * 0.5;
  vec2 grow = vec2(sw * 0.5 + 1.0);
  vLocal = (corner * 2.0 - 1.0) * (vHalf + grow);
  vec2 p = center + vLocal;
  gl_Position = vec4(p.x / uSize.x * 2.0 - 1.0, 1.0 - p.y / uSize.y * 2.0, 0.0, 1.0);
  vRadius = min(params.x * k, min(vHalf.x, vHalf.y));
  vStroke = sw; vFill = fill; vStrokeColor = stroke;
}`;

const RECT_FS = `#version 300 es
precision mediump float;
in vec2 vLocal; in vec2 vHalf; in float vRadius; in float vStroke;
in vec4 vFill; in vec4 vStrokeColor;
out vec4 color;
void main() {
  vec2 q = abs(vLocal) - vHalf + vRadius;
  float d = length(max(q, 0.0)) + min(max(q.x, q.y), 0.0) - vRadius;  // <0 inside
  float f = clamp(0.5 - d, 0.0, 1.0) * vFill.a;
  float s = vStroke > 0.0 ? clamp(vStroke * 0.5 + 0.5 - abs(d), 0.0, 1.0) * vStrokeColor.a : 0.0;
  float a = s + f * (1.0 - s);
  if (a <= 0.0) discard;
  color = vec4(vStrokeColor.rgb * s + vFill.rgb * f * (1.0 - s), a);  // premultiplied
}`;

const FLAT_VS = `#version 300 es
layout(location=0) in vec2 pos;
uniform vec3 uView; uniform vec2 uSize;
void main() {
  vec2 p = pos * uView.x + uView.yz;
  gl_Position = vec4(p.x / uSize.x * 2.0 - 1.0, 1.0 - p.y / uSize.y * 2.0, 0.0, 1.0);
}`;

const FLAT_FS = `#version 300 es
precision mediump float;
uniform vec4 uColor;
out vec4 color;
void main() { color = vec4(uColor.rgb * uColor.a, uColor.a); }`;

const GLYPH_VS = `#version 300 es
layout(location=0) in vec2 corner;
layout(location=1) in vec4 glyph;   // left, top (graph px), scale, glyph number
layout(location=2) in vec4 tint;
uniform vec3 uView; uniform vec2 uSize;
uniform vec4 uAtlas;  // cell w, cell h (atlas px), columns, rows
out vec2 vUV; out vec4 vTint;
void main() {
  vec2 cell = uAtlas.xy;
  vec2 p = (glyph.xy + corner * cell * glyph.z) * uView.x + uView.yz;
  gl_Position = vec4(p.x / uSize.x * 2.0 - 1.0, 1.0 - p.y / uSize.y * 2.0, 0.0, 1.0);
  float n = glyph.w;
  vec2 at = vec2(mod(n, uAtlas.z), floor(n / uAtlas.z));
  vUV = (at + corner) / uAtlas.zw;
  vTint = tint;
}`;

const GLYPH_FS = `#version 300 es
precision mediump float;
uniform sampler2D uTex;
in vec2 vUV; in vec4 vTint;
out vec4 color;
void main() {
  float a = texture(uTex, vUV).a * vTint.a;
  if (a <= 0.0) discard;
  color = vec4(vTint.rgb * a, a);
}`;

function compile(gl, vs, fs) {
  const program = gl.createProgram();
  for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
    const shader = gl.createShader(type);
    gl.shaderSource(shader, src);
    gl.compileShader(shader);
    if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) throw new Error(`WebGL shader: ${gl.getShaderInfoLog(shader)}`);
    gl.attachShader(program, shader);
  }
  gl.linkProgram(program);
  if (!gl.getProgramParameter(program, gl.LINK_STATUS)) throw new Error(`WebGL program: ${gl.getProgramInfoLog(program)}`);
  const uniforms = {};
  for (const name of ['uView', 'uSize', 'uColor', 'uAtlas', 'uTex']) uniforms[name] = gl.getUniformLocation(program, name);
  return { program, uniforms };
}

/** '#rrggbb' or 'rgba(r,g,b,a)' -> packed 0xAABBGGRR (the byte order of a Uint32 in memory). */
export function packColor(css, alpha = 1) {
  let r = 0;
  let g = 0;
  let b = 0;
  let a = alpha;
  const m = /^rgba?\(([^)]+)\)$/.exec(css);
  if (m) {
    const parts = m[1].split(',').map(Number);
    [r, g, b] = parts;
    if (parts.length > 3) a *= parts[3];
  } else if (/^#[0-9a-f]{6}$/i.test(css)) {
    r = parseInt(css.slice(1, 3), 16);
    g = parseInt(css.slice(3, 5), 16);
    b = parseInt(css.slice(5, 7), 16);
  }
  return ((Math.round(a * 255) << 24) | (b << 16) | (g << 8) | r) >>> 0;
}

/** The float parts of a color for a uniform: [r, g, b, a] in 0..1. */
function unpack(c) {
  return [(c & 255) / 255, ((c >>> 8) & 255) / 255, ((c >>> 16) & 255) / 255, (c >>> 24) / 255];
}

export const RECT_FLOATS = 8; // x, y, w, h, radius, stroke width, least stroke px, -

export class GLRenderer {
  /** Throws when the browser gives no WebGL2 context (the caller draws SVG instead). */
  constructor(canvas) {
    const gl = canvas.getContext('webgl2', { antialias: true, premultipliedAlpha: true, alpha: false });
    if (!gl) throw new Error('WebGL2 is not available');
    this.gl = gl;
    this.canvas = canvas;
    this.rect = compile(gl, RECT_VS, RECT_FS);
    this.flat = compile(gl, FLAT_VS, FLAT_FS);
    this.glyph = compile(gl, GLYPH_VS, GLYPH_FS);
    this.quad = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, this.quad);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([0, 0, 1, 0, 0, 1, 1, 1]), gl.STATIC_DRAW);
    this.rectGeom = gl.createBuffer();
    this.rectColor = gl.createBuffer();
    this.lineBuf = gl.createBuffer();
    this.arrowBuf = gl.createBuffer();
    this.glyphBuf = gl.createBuffer();
    this.glyphColor = gl.createBuffer();
    this.texture = gl.createTexture();
    this.counts = { frames: 0, rects: 0, lines: 0, arrows: 0, glyphs: 0 };
    this.vaoFrames = gl.createVertexArray();
    this.vaoNodes = gl.createVertexArray();
    this.vaoLines = this.#flatVAO(this.lineBuf);
    this.vaoArrows = this.#flatVAO(this.arrowBuf);
    this.vaoGlyphs = gl.createVertexArray();
    gl.bindVertexArray(this.vaoGlyphs);
    this.#quadAttr();
    this.#attr(this.glyphBuf, 1, 4, gl.FLOAT, false, 16, 0);
    this.#attr(this.glyphColor, 2, 4, gl.UNSIGNED_BYTE, true, 4, 0);
    gl.bindVertexArray(null);
    this.atlasVersion = -1;
  }

  #attr(buffer, loc, size, type, normalized, stride, offset, divisor = 1) {
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
    gl.enableVertexAttribArray(loc);
    gl.vertexAttribPointer(loc, size, type, normalized, stride, offset);
    gl.vertexAttribDivisor(loc, divisor);
  }

  #quadAttr() {
    this.#attr(this.quad, 0, 2, this.gl.FLOAT, false, 0, 0, 0);
  }

  #flatVAO(buffer) {
    const gl = this.gl;
    const vao = gl.createVertexArray();
    gl.bindVertexArray(vao);
    this.#attr(buffer, 0, 2, gl.FLOAT, false, 0, 0, 0);
    gl.bindVertexArray(null);
    return vao;
  }

  /** A VAO over the rect buffers starting at instance `first` (frames and boxes share them). */
  #rectVAO(vao, first) {
    const gl = this.gl;
    const stride = RECT_FLOATS * 4;
    gl.bindVertexArray(vao);
    this.#quadAttr();
    this.#attr(this.rectGeom, 1, 4, gl.FLOAT, false, stride, first * stride);
    this.#attr(this.rectGeom, 2, 4, gl.FLOAT, false, stride, first * stride + 16);
    this.#attr(this.rectColor, 3, 4, gl.UNSIGNED_BYTE, true, 8, first * 8);
    this.#attr(this.rectColor, 4, 4, gl.UNSIGNED_BYTE, true, 8, first * 8 + 4);
    gl.bindVertexArray(null);
  }

  /**
   * Upload a whole scene. rects: Float32Array (RECT_FLOATS per rect) and colors: Uint32Array
   * (fill, stroke per rect), the first `frames` of them drawn under the edges; lines:
   * Float32Array of segment end points; arrows: Float32Array of triangle corners.
   */
  setScene({ rects, colors, frames, lines, arrows }) {
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.rectGeom);
    gl.bufferData(gl.ARRAY_BUFFER, rects, gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.rectColor);
    gl.bufferData(gl.ARRAY_BUFFER, colors, gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.lineBuf);
    gl.bufferData(gl.ARRAY_BUFFER, lines, gl.STATIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.arrowBuf);
    gl.bufferData(gl.ARRAY_BUFFER, arrows, gl.STATIC_DRAW);
    const n = rects.length / RECT_FLOATS;
    this.#rectVAO(this.vaoFrames, 0);
    this.#rectVAO(this.vaoNodes, frames);
    this.counts = { ...this.counts, frames, rects: n, lines: lines.length / 2, arrows: arrows.length / 2 };
  }

  /** Re-upload rects [from, to) after their geometry or colours changed. */
  updateRects(rects, colors, from = 0, to = rects.length / RECT_FLOATS) {
    if (to <= from) return;
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.rectGeom);
    gl.bufferSubData(gl.ARRAY_BUFFER, from * RECT_FLOATS * 4, rects, from * RECT_FLOATS, (to - from) * RECT_FLOATS);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.rectColor);
    gl.bufferSubData(gl.ARRAY_BUFFER, from * 8, colors, from * 2, (to - from) * 2);
  }

  /** Upload the label glyphs (a GlyphRun) and, if it changed, the atlas. */
  setGlyphs(run, atlas) {
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
    gl.bindBuffer(gl.ARRAY_BUFFER, this.glyphBuf);
    gl.bufferData(gl.ARRAY_BUFFER, run.f.subarray(0, run.length * 4), gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.glyphColor);
    gl.bufferData(gl.ARRAY_BUFFER, run.c.subarray(0, run.length), gl.DYNAMIC_DRAW);
    this.counts.glyphs = run.length;
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

  /** One frame at scale k, offset (tx, ty); colours: {background, edge} packed. */
  draw(k, tx, ty, { background, edge }) {
    const gl = this.gl;
    this.resize();
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    const bg = unpack(background);
    gl.clearColor(bg[0], bg[1], bg[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
    const c = this.counts;
    if (c.frames) {
      this.#use(this.rect, k, tx, ty);
      gl.bindVertexArray(this.vaoFrames);
      gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, c.frames);
    }
    const u = this.#use(this.flat, k, tx, ty);
    gl.uniform4f(u.uColor, ...unpack(edge));
    gl.bindVertexArray(this.vaoLines);
    gl.drawArrays(gl.LINES, 0, c.lines);
    gl.bindVertexArray(this.vaoArrows);
    gl.drawArrays(gl.TRIANGLES, 0, c.arrows);
    if (c.rects > c.frames) {
      this.#use(this.rect, k, tx, ty);
      gl.bindVertexArray(this.vaoNodes);
      gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, c.rects - c.frames);
    }
    if (c.glyphs && this.atlasShape) {
      const g = this.#use(this.glyph, k, tx, ty);
      gl.uniform4f(g.uAtlas, ...this.atlasShape);
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, this.texture);
      gl.uniform1i(g.uTex, 0);
      gl.bindVertexArray(this.vaoGlyphs);
      gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, c.glyphs);
    }
    gl.bindVertexArray(null);
  }

  destroy() {
    const ext = this.gl.getExtension('WEBGL_lose_context');
    if (ext) ext.loseContext();
  }
}
