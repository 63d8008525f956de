// The document editor's live preview renders the start of the text: each preview request
// carries as much of it as fits the textarea's data-preview-bytes once percent-encoded, and
// says when it was cut, as the server refuses a larger preview (413).
function previewStart(text, budget) {
  var size = encodeURIComponent(text).length;
  while (size > budget) {
    text = text.slice(0, Math.floor((text.length * budget) / size));
    if (/[\uD800-\uDBFF]$/.test(text)) {
      text = text.slice(0, -1); // half of a character outside the BMP cannot be encoded
    }
    size = encodeURIComponent(text).length;
  }
  return text;
}

document.addEventListener("htmx:configRequest", function (event) {
  var budget = Number(event.detail.elt.dataset.previewBytes);
  if (!budget) {
    return;
  }
  var text = event.detail.parameters.get("content") || "";
  var start = previewStart(text, budget);
  if (start.length < text.length) {
    event.detail.parameters.set("content", start);
    event.detail.parameters.set("cut", "1");
  }
});
