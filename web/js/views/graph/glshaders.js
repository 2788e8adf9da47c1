// The WebGL2 shader programs of the big-graph drawing (glrender.js): boxes as rounded
// rectangles whose fill and stroke come from a distance function (dashed for group frames),
// flat-coloured edges and arrowheads, label glyphs tinted from the atlas (glyphs.js), and the
// far-out image as one textured quad. Here apart from the buffers that feed them.
const RECT_VS = `#version 300 es
layout(location=0) in vec2 corner;  // 0 or 1 in x and y: which corner of the box
layout(location=1) in vec4 box;     // x, y, w, h (graph px)
layout(location=2) in vec4 params;  // corner radius, stroke width (graph px), least stroke (screen px), dashed
layout(location=3) in vec4 fill;
layout(location=4) in vec4 stroke;
uniform vec3 uView;  // k, tx, ty: screen = graph * k + t (css px)
uniform vec2 uSize;  // the canvas in css px
out vec2 vLocal; out vec2 vHalf; out float vRadius; out float vStroke;
out vec4 vFill; out vec4 vStrokeColor; out float vDash;
void main() {
  float k = uView.x;
  vDash = params.w > 0.0 ? k : 0.0;
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
in vec4 vFill; in vec4 vStrokeColor; in float vDash;
out vec4 color;
void main() {
  vec2 q = abs(vLocal) - vHalf + vRadius;
  float d = length(max(q, 0.0)) + min(max(q.x, q.y), 0.0) - vRadius;  // <0 inside
  float f = clamp(0.5 - d, 0.0, 1.0) * vFill.a;
  float s = vStroke > 0.0 ? clamp(vStroke * 0.5 + 0.5 - abs(d), 0.0, 1.0) * vStrokeColor.a : 0.0;
  if (vDash > 0.0) {  // dashes of 5 and gaps of 3 graph px along the edge (the SVG frames')
    float along = q.x > q.y ? vLocal.y : vLocal.x;
    if (mod(along + 4096.0 * vDash, 8.0 * vDash) > 5.0 * vDash) s = 0.0;
  }
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

const IMAGE_VS = `#version 300 es
layout(location=0) in vec2 corner;
out vec2 vUV;
void main() { vUV = vec2(corner.x, corner.y); gl_Position = vec4(corner.x * 2.0 - 1.0, 1.0 - corner.y * 2.0, 0.0, 1.0); }`;

const IMAGE_FS = `#version 300 es
precision mediump float;
uniform sampler2D uTex;
in vec2 vUV;
out vec4 color;
void main() { color = texture(uTex, vUV); }`;

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

/** The four programs, compiled and linked: {rect, flat, glyph, image}. */
export function compilePrograms(gl) {
  return {
    rect: compile(gl, RECT_VS, RECT_FS),
    flat: compile(gl, FLAT_VS, FLAT_FS),
    glyph: compile(gl, GLYPH_VS, GLYPH_FS),
    image: compile(gl, IMAGE_VS, IMAGE_FS),
  };
}
