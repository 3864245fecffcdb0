from ._gpk import *
