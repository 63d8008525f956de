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
