// The main navigation keeps to one line; where that line does not fit, it folds behind the menu
// button, which shows and hides it. A file of its own, as the Content-Security-Policy runs no
// inline script; without it the navigation wraps and stays open.
document.addEventListener("DOMContentLoaded", () => {
  const toggle = document.querySelector(".nav-toggle");
  const topbar = toggle && toggle.closest(".topbar");
  const nav = document.getElementById("main-nav");
  if (!topbar || !nav) return;
  topbar.classList.add("nav-collapsible");
  toggle.hidden = false;
  const fit = () => {
    topbar.classList.remove("nav-folded");
    const overflowing = nav.scrollWidth > nav.clientWidth + 1 || topbar.scrollWidth > topbar.clientWidth + 1;
    topbar.classList.toggle("nav-folded", overflowing);
  };
  fit();
  window.addEventListener("resize", fit);
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    topbar.classList.toggle("nav-open", open);
  });
});
