import dagre from '@dagrejs/dagre';

// Layout runs off the main thread: a 200-step graph takes dagre hundreds of milliseconds.
export type LayoutRequest = {
  id: number;
  nodes: { id: string; width: number; height: number }[];
  edges: { from: string; to: string }[];
};
export type LayoutResponse = { id: number; positions: Record<string, { x: number; y: number }> };

self.onmessage = (e: MessageEvent<LayoutRequest>) => {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 30, ranksep: 60 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of e.data.nodes) g.setNode(n.id, { width: n.width, height: n.height });
  for (const ed of e.data.edges) if (g.hasNode(ed.from) && g.hasNode(ed.to)) g.setEdge(ed.from, ed.to);
  dagre.layout(g);
  const positions: LayoutResponse['positions'] = {};
  for (const n of e.data.nodes) {
    const p = g.node(n.id);
    positions[n.id] = { x: p.x - n.width / 2, y: p.y - n.height / 2 };
  }
  (self as unknown as Worker).postMessage({ id: e.data.id, positions } satisfies LayoutResponse);
};
