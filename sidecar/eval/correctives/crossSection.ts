/**
 * The candy-wrapper measure: the area of a limb's cross-section near a joint. Linear blend skinning averages the two
 * bones' transforms where their weights meet, so a twisted or bent joint's section shrinks towards the bone (a
 * twisted wrist pinches like a sweet's wrapper: by cos²(θ/2) at a 50/50 blend); dual quaternions and the exact pose
 * keep it. Measured without vertex correspondence: the mesh is cut by a plane and the one closed contour nearest the
 * joint is taken, so a torso the plane also crosses does not count.
 */

/**
 * crossSectionArea: the area enclosed by the contour of the mesh ∩ plane that passes nearest `point` (contour pieces
 * joined through the mesh edges they cross; the signed shoelace sum about `point`, so a pinched, self-crossing contour
 * counts its net area). positions Float32Array #V*3, triangles Uint32Array #T*3 (consistently wound, closed), point:
 * a point of the plane (the joint), normal: the plane's normal (any length > 0) → m² (0 when the plane misses the mesh)
 */
export function crossSectionArea(positions: Float32Array, triangles: Uint32Array, point: ArrayLike<number>, normal: ArrayLike<number>): number {
  const nl = Math.hypot(normal[0], normal[1], normal[2]);
  const nx = normal[0] / nl, ny = normal[1] / nl, nz = normal[2] / nl;
  const V = positions.length / 3;
  const side = new Float64Array(V);
  for (let v = 0; v < V; v++) {
    side[v] = (positions[3 * v] - point[0]) * nx + (positions[3 * v + 1] - point[1]) * ny + (positions[3 * v + 2] - point[2]) * nz;
  }
  // per crossing segment: its two end points, its signed area about `point`, and the mesh edges it ends on
  const ends: number[] = [];
  const areas: number[] = [];
  const edgeOwner = new Map<number, number>();
  const parent: number[] = [];
  const find = (s: number): number => { while (parent[s] !== s) { parent[s] = parent[parent[s]]; s = parent[s]; } return s; };
  const crossing = (a: number, b: number): [number, number, number] => {
    const t = side[a] / (side[a] - side[b]);
    return [0, 1, 2].map((k) => positions[3 * a + k] + t * (positions[3 * b + k] - positions[3 * a + k]) - point[k]) as [number, number, number];
  };
  for (let t = 0; t < triangles.length; t += 3) {
    const corners = [triangles[t], triangles[t + 1], triangles[t + 2]];
    const up = corners.map((v) => side[v] >= 0);
    if (up[0] === up[1] && up[1] === up[2]) continue;
    // walking the corners in winding order, the edge leaving the "up" side and the one entering it
    const points: [number, number, number][] = [];
    const keys: number[] = [];
    let outFirst = false;
    for (let c = 0; c < 3; c++) {
      const a = corners[c], b = corners[(c + 1) % 3];
      if (up[c] === up[(c + 1) % 3]) continue;
      if (points.length === 0) outFirst = up[c];
      points.push(crossing(a, b));
      keys.push(Math.min(a, b) * V + Math.max(a, b));
    }
    // orient every segment the same way round the contour (from the edge entering the up side to the one leaving it)
    const [p, q] = outFirst ? [points[1], points[0]] : [points[0], points[1]];
    const area = 0.5 * (nx * (p[1] * q[2] - p[2] * q[1]) + ny * (p[2] * q[0] - p[0] * q[2]) + nz * (p[0] * q[1] - p[1] * q[0]));
    const s = areas.length;
    areas.push(area);
    ends.push((p[0] + q[0]) / 2, (p[1] + q[1]) / 2, (p[2] + q[2]) / 2);
    parent.push(s);
    for (const key of keys) {
      const other = edgeOwner.get(key);
      if (other === undefined) edgeOwner.set(key, s);
      else parent[find(other)] = find(s);
    }
  }
  if (!areas.length) return 0;
  let nearest = 0, best = Infinity;
  for (let s = 0; s < areas.length; s++) {
    const d = ends[3 * s] ** 2 + ends[3 * s + 1] ** 2 + ends[3 * s + 2] ** 2;
    if (d < best) { best = d; nearest = s; }
  }
  const loop = find(nearest);
  let sum = 0;
  for (let s = 0; s < areas.length; s++) if (find(s) === loop) sum += areas[s];
  return Math.abs(sum);
}
