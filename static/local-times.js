// Times on the hosted pages (app/pages/times.py) come in UTC, saying "UTC", inside
// <time datetime="…Z" data-local="datetime|date|long-date">; this says each again in the
// browser's time zone and the page's language (<html lang>), the zone named after a time. The UTC
// words stay as the element's title. Where Intl cannot say it, the UTC words stay.
(function () {
  "use strict";
  const STYLES = {
    "datetime": {year: "numeric", month: "short", day: "numeric", hour: "numeric",
                 minute: "2-digit", second: "2-digit", timeZoneName: "short"},
    "date": {year: "numeric", month: "short", day: "numeric"},
    "long-date": {year: "numeric", month: "long", day: "numeric"}
  };
  const language = document.documentElement.lang || undefined;

  document.querySelectorAll("time[data-local]").forEach(function (element) {
    const style = STYLES[element.dataset.local];
    const when = new Date(element.getAttribute("datetime"));
    if (!style || isNaN(when.getTime())) return;
    let said;
    try {
      said = new Intl.DateTimeFormat(language, style).format(when);
    } catch (error) {
      return;
    }
    element.title = element.textContent;
    element.textContent = said;
  });
})();
