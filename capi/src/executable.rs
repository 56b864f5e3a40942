//! Compiling a temporal program once and running it many times from C,
//! with tensors exchanged as DLPack `DLManagedTensor`s.
