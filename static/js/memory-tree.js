// The memory page's tree, as the panel's write forms (data-tree-shown) report it: the ids of
// the items it shows, in one field, and those of its folders that offer "Load more", in another,
// so that a write's answer swaps in only what has a place on the page (memory/logic/tree.py).
// Read when the request is made, the lists are never stale.
function memoryTreeIds(selector, prefix, from) {
  var elements = document.querySelectorAll(selector);
  return Array.prototype.map.call(elements, function (element) {
    return (from ? from(element) : element).id.slice(prefix.length);
  }).join(" ");
}

document.addEventListener("htmx:configRequest", function (event) {
  if (!event.detail.elt.closest("[data-tree-shown]")) {
    return;
  }
  event.detail.parameters.set("shown", memoryTreeIds("#tree-roots .tree-item", "item-"));
  event.detail.parameters.set("paged", memoryTreeIds("#tree-roots .tree-more", "children-", function (more) {
    return more.closest("ul.tree");
  }));
});

// A link that opens a node in the panel: if the tree shows the node's item, its folders are
// opened to it; if not (a search result, an item of a page not loaded), the answer brings the
// tree opened down to the node. Either way the tree marks where the panel is.
var MEMORY_NODE_PATH = /^\/memory\/([^/]+)\/$/;

function memoryNodeId(path) {
  var match = MEMORY_NODE_PATH.exec(path.split("?")[0]);
  return match ? decodeURIComponent(match[1]) : null;
}

document.addEventListener("htmx:configRequest", function (event) {
  var id = event.detail.verb === "get" && event.detail.target.id === "detail" && memoryNodeId(event.detail.path);
  if (id && document.getElementById("tree-roots") && !document.getElementById("item-" + id)) {
    event.detail.headers["X-Tree-Reveal"] = "1";
  }
});

document.addEventListener("htmx:afterSettle", function (event) {
  var panel = event.detail.target.id === "detail" && event.detail.target.querySelector(".node-detail[data-node-id]");
  var link = panel && document.getElementById("link-" + panel.getAttribute("data-node-id"));
  if (!link) {
    return;
  }
  document.querySelectorAll('#tree-roots .node-link[aria-current="location"]').forEach(function (other) {
    other.removeAttribute("aria-current");
  });
  link.setAttribute("aria-current", "location");
  for (var folder = link.closest("li").parentElement.closest("details"); folder; folder = folder.parentElement.closest("details")) {
    folder.open = true;
  }
});
