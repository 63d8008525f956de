// The memory page's tree, as the panel's write forms (data-tree-shown) report it: the ids of
// the items it shows, in one field, so that a write's answer swaps in only what has a place on
// the page (memory/logic/tree.py). Read when the request is made, the list is never stale.
document.addEventListener("htmx:configRequest", function (event) {
  if (!event.detail.elt.closest("[data-tree-shown]")) {
    return;
  }
  var items = document.querySelectorAll("#tree-roots .tree-item");
  var ids = Array.prototype.map.call(items, function (item) {
    return item.id.slice("item-".length);
  });
  event.detail.parameters.set("shown", ids.join(" "));
});
