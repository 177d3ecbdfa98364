// Package startpages hands back to the kernel the pages of rudder's binary
// that only its start used.
//
// Go maps the binary's code and constant data from the file, and the kernel
// maps each page touched with the pages around it (fault-around). Start-up runs the
// init of every package linked in (Helm's, client-go's, every API group's
// scheme), so by the time the caches have synced about 50 MiB of a 60 MiB
// binary is resident, while a running rudder touches about 15 MiB of it under
// pod churn. Those pages are clean: paged out, the ones still used come back
// from the page cache when next touched, and the rest stay out.
package startpages
