// The menu button of narrow screens: it shows and hides the main navigation. A file of its own,
// as the Content-Security-Policy runs no inline script; without it the navigation stays open.
document.addEventListener("DOMContentLoaded", () => {
  const toggle = document.querySelector(".nav-toggle");
  const topbar = toggle && toggle.closest(".topbar");
  if (!topbar) return;
  topbar.classList.add("nav-collapsible");
  toggle.hidden = false;
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    topbar.classList.toggle("nav-open", open);
  });
});
