/**
 * Cytoscape as a bundle of its own (dist/webview/cytoscape.js): it is 440 KB of the investigator's
 * 573 KB, and only the ungrouped graph draws with it. The page loads it when that graph is first
 * drawn (webview/graph/load-cytoscape.ts), so every other screen, and a big run's grouped graph,
 * starts without compiling it.
 */
import cytoscape from "cytoscape";
import type {} from "./graph/load-cytoscape"; // declares the global

window.__causewayCytoscape = cytoscape;
