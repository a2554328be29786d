#pragma once
#include "elsewhere.h"
int state;
