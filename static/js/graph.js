// The graph page's nodes open from the keyboard as a button does, with Enter or Space and no
// other key. Not an htmx filter (keyup[key=='Enter']): htmx compiles those with eval, which the
// Content-Security-Policy forbids. Listened for on the document, so that a drawing swapped in
// by the page's polling has it too; each node's hx-trigger names the event sent here.
var GRAPH_NODE_OPEN_KEYS = ["Enter", " "];

document.addEventListener("keydown", function (event) {
  var node = event.target.closest && event.target.closest(".graph-node");
  if (!node || event.repeat || GRAPH_NODE_OPEN_KEYS.indexOf(event.key) < 0) {
    return;
  }
  if (event.altKey || event.ctrlKey || event.metaKey) {
    return;
  }
  event.preventDefault(); // Space would scroll the page
  node.dispatchEvent(new CustomEvent("graph-node-open"));
});
