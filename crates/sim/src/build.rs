//! Compiling operator sources with g++ (in progress).
