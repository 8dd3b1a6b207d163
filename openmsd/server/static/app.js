// openmsd page enhancements; the pages work without this file.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // A picture wider than the screen scrolls to its query paper.
  document.querySelectorAll(".graph-scroll").forEach((frame) => {
    const query = frame.querySelector("circle.query");
    if (query && frame.scrollWidth > frame.clientWidth) {
      const box = query.getBoundingClientRect(), outer = frame.getBoundingClientRect();
      frame.scrollLeft += box.left - outer.left - frame.clientWidth / 2;
    }
  });

  // Filters apply as soon as they change.
  const filters = document.getElementById("filters");
  if (filters) {
    filters.addEventListener("change", () => filters.requestSubmit());
  }

  // Select all results.
  const all = document.getElementById("select-all");
  if (all) {
    all.addEventListener("change", () => {
      document.querySelectorAll("input.pick").forEach((box) => { box.checked = all.checked; });
    });
  }

  // Related to the selected papers as a library: the "related to these N papers" view.
  const library = document.getElementById("related-selected");
  if (library) {
    library.addEventListener("click", () => {
      const ids = [...document.querySelectorAll("input.pick:checked")].map((box) => box.value);
      if (ids.length > 0) {
        window.location.href = "/library?" + new URLSearchParams(ids.map((id) => ["id", id]));
      }
    });
  }

  // The selected results as BibTeX, RIS or CSL-JSON: shown in the page and downloaded.
  const form = document.getElementById("bibtex-form");
  const out = document.getElementById("bibtex-out");
  if (form && out) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const ids = [...form.querySelectorAll("input.pick:checked")].map((box) => box.value);
      if (ids.length === 0) {
        out.textContent = "Select at least one paper.";
        out.hidden = false;
        return;
      }
      const params = new URLSearchParams(ids.map((id) => ["id", id]));
      const picked = form.querySelector("#export-format");
      const format = picked ? picked.value : "bib";
      params.append("format", format);
      const response = await fetch("/api/bibtex?" + params.toString());
      const text = await response.text();
      out.textContent = text;  // text, never HTML
      out.hidden = false;
      if (response.ok) {
        const link = document.createElement("a");
        const type = response.headers.get("content-type") || "text/plain";
        link.href = URL.createObjectURL(new Blob([text], { type: type }));
        link.download = { bib: "openmsd.bib", ris: "openmsd.ris", csl: "openmsd.json" }[format];
        link.click();
        URL.revokeObjectURL(link.href);
      }
    });
  }
});
