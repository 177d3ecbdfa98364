// Package leak holds no code, only a test: a real manager runs Databases
// through their life against envtest, and the passwords of their credentials
// Secrets must appear nowhere else (Helm storage, objects, events, the log).
// It drives rudder through the manager and never imports the reconciler.
package leak
